package io.ganglion.metadata;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;

/**
 * A user: its name, a salted SHA-256 password hash (a 4-byte salt then SHA-256 of salt and password, as RabbitMQ
 * stores it) and its tags. A user may use every virtual host.
 */
public record User(String name, byte[] passwordHash, List<String> tags) {
    public User {
        Objects.requireNonNull(name, "name");
        passwordHash = passwordHash.clone();
        tags = List.copyOf(tags);
    }

    /** A user with {@code password} hashed under {@code salt}. */
    public static User withPassword(String name, String password, byte[] salt, List<String> tags) {
        if (salt.length != 4) {
            throw new IllegalArgumentException("salt must be 4 bytes");
        }
        return new User(name, hash(salt, password), tags);
    }

    /** Compares in constant time. */
    public boolean checkPassword(String password) {
        if (passwordHash.length != 36) {
            return false;
        }
        byte[] salt = Arrays.copyOf(passwordHash, 4);
        return MessageDigest.isEqual(passwordHash, hash(salt, password));
    }

    private static byte[] hash(byte[] salt, String password) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            digest.update(salt);
            digest.update(password.getBytes(StandardCharsets.UTF_8));
            byte[] out = new byte[36];
            System.arraycopy(salt, 0, out, 0, 4);
            System.arraycopy(digest.digest(), 0, out, 4, 32);
            return out;
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every JDK", e);
        }
    }

    @Override
    public byte[] passwordHash() {
        return passwordHash.clone();
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof User user
                && name.equals(user.name)
                && Arrays.equals(passwordHash, user.passwordHash)
                && tags.equals(user.tags);
    }

    @Override
    public int hashCode() {
        return Objects.hash(name, Arrays.hashCode(passwordHash), tags);
    }

    @Override
    public String toString() {
        return "User[" + name + ", hash=" + HexFormat.of().formatHex(passwordHash, 0, 4) + "…, tags=" + tags + "]";
    }
}
