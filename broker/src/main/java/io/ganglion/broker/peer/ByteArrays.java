package io.ganglion.broker.peer;

import java.util.Arrays;
import java.util.List;

/** Content equality for lists of byte arrays, which {@code List.equals} compares by identity. */
final class ByteArrays {
    private ByteArrays() {}

    static boolean equals(List<byte[]> a, List<byte[]> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (!Arrays.equals(a.get(i), b.get(i))) {
                return false;
            }
        }
        return true;
    }

    static int hashCode(List<byte[]> list) {
        int hash = 1;
        for (byte[] element : list) {
            hash = 31 * hash + Arrays.hashCode(element);
        }
        return hash;
    }

    static long totalLength(List<byte[]> list) {
        long total = 0;
        for (byte[] element : list) {
            total += element.length;
        }
        return total;
    }
}
