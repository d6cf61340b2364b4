package io.ganglion.queues.routing;

/**
 * AMQP topic matching: words separated by '.', where '*' matches exactly one word and '#' zero or more words.
 *
 * <p>Dynamic programming over (pattern word, key word), so a pattern of many '#' cannot blow up: O(pattern x key).
 */
public final class TopicMatcher {
    private TopicMatcher() {}

    public static boolean matches(String pattern, String routingKey) {
        String[] p = split(pattern);
        String[] k = split(routingKey);
        // reach[j]: the first i pattern words can match the first j key words.
        boolean[] reach = new boolean[k.length + 1];
        reach[0] = true;
        for (String word : p) {
            boolean[] next = new boolean[k.length + 1];
            if (word.equals("#")) {
                boolean any = false;
                for (int j = 0; j <= k.length; j++) {
                    any |= reach[j];
                    next[j] = any;
                }
            } else {
                for (int j = 1; j <= k.length; j++) {
                    next[j] = reach[j - 1] && (word.equals("*") || word.equals(k[j - 1]));
                }
            }
            reach = next;
        }
        return reach[k.length];
    }

    private static String[] split(String words) {
        return words.isEmpty() ? new String[] {""} : words.split("\\.", -1);
    }
}
