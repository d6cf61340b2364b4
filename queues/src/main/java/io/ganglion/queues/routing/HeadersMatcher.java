package io.ganglion.queues.routing;

import java.util.Map;

/**
 * Headers exchange matching. The binding's {@code x-match} is {@code all} (the default) or {@code any}; {@code
 * all-with-x} and {@code any-with-x} also compare headers whose names start with {@code x-}, which the plain forms
 * ignore. A binding value that is absent (void) matches on the header's presence alone.
 */
public final class HeadersMatcher {
    private static final String X_MATCH = "x-match";

    private HeadersMatcher() {}

    /** True when {@code headers} of a message satisfy {@code bindingArguments}. */
    public static boolean matches(Map<String, Object> bindingArguments, Map<String, Object> headers) {
        String mode = String.valueOf(bindingArguments.getOrDefault(X_MATCH, "all"));
        boolean any = mode.startsWith("any");
        boolean withX = mode.endsWith("-with-x");
        for (Map.Entry<String, Object> condition : bindingArguments.entrySet()) {
            String key = condition.getKey();
            if (key.equals(X_MATCH) || (!withX && key.startsWith("x-"))) {
                continue;
            }
            boolean met = headers.containsKey(key)
                    && (condition.getValue() == null || FieldValues.equal(condition.getValue(), headers.get(key)));
            if (any && met) {
                return true;
            }
            if (!any && !met) {
                return false;
            }
        }
        return !any;
    }

    /** True when {@code x-match} is absent or one of the four accepted values. */
    public static boolean validMatchMode(Map<String, Object> bindingArguments) {
        Object mode = bindingArguments.get(X_MATCH);
        return mode == null
                || mode.equals("all")
                || mode.equals("any")
                || mode.equals("all-with-x")
                || mode.equals("any-with-x");
    }
}
