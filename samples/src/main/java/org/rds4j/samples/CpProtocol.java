package org.rds4j.samples;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The messages of {@code rds cp} ({@link CpCommand} has the protocol) and the server's check of a target
 * path. Every message starts with the same 13 bytes, big-endian: the magic {@code "RCP1"} (int), the type
 * (byte) and the transfer id (long); then, by type:
 * <pre>
 *   START  1  size (long), target path (UTF-8, the rest, 1..4096 bytes)       client to server
 *   DATA   2  offset (long), file bytes (the rest, up to {@link #CHUNK} bytes)  client to server
 *   END    3  SHA-256 of the whole file (32 bytes)                              client to server
 *   OK     4  size (long), SHA-256 the server computed (32 bytes)               server to client
 *   ERROR  5  reason (UTF-8, the rest, up to 1000 bytes)                        server to client
 * </pre>
 * A message that is too short, has another magic or an unknown type is not an {@code rds cp} message
 * ({@link #decode} returns {@code null}).
 */
final class CpProtocol
{
    /** {@code "RCP1"}. */
    static final int MAGIC = 0x52435031;
    /** Client: a new transfer. */
    static final byte START = 1;
    /** Client: file bytes at an offset. */
    static final byte DATA = 2;
    /** Client: the whole file was sent; its digest. */
    static final byte END = 3;
    /** Server: the file is in place; its size and digest as written. */
    static final byte OK = 4;
    /** Server: the transfer failed; why. */
    static final byte ERROR = 5;

    /** Bytes before a message's own fields: magic, type, transfer id. */
    static final int HEADER = 4 + 1 + 8;
    /** File bytes per DATA message. */
    static final int CHUNK = 64 * 1024;
    /** Bytes of a DATA message before the file bytes. */
    static final int DATA_HEADER = HEADER + 8;
    /** Longest target path, in UTF-8 bytes. */
    static final int MAX_PATH_BYTES = 4096;
    /** Longest ERROR reason, in UTF-8 bytes. */
    static final int MAX_REASON_BYTES = 1000;
    /** SHA-256. */
    static final int DIGEST_BYTES = 32;
    /** A buffer large enough for any message of the protocol. */
    static final int MAX_MESSAGE = DATA_HEADER + CHUNK;

    private CpProtocol()
    {
    }

    /**
     * A decoded message; the fields a type does not have are 0 or {@code null}.
     *
     * @param type   {@link #START} .. {@link #ERROR}.
     * @param id     the transfer id.
     * @param number START and OK: the size; DATA: the offset.
     * @param digest END and OK: the SHA-256.
     * @param text   START: the target path; ERROR: the reason.
     * @param data   DATA: the file bytes, a view of the decoded buffer.
     */
    record Message(byte type, long id, long number, byte[] digest, String text, ByteBuffer data)
    {
    }

    /**
     * @param buffer where the message is written, from its start.
     * @param id     the transfer id.
     * @param size   the file's size in bytes.
     * @param path   the target path, relative to the served directory.
     * @return {@code buffer}, flipped: the START message.
     */
    static ByteBuffer start(final ByteBuffer buffer, final long id, final long size, final String path)
    {
        header(buffer, START, id).putLong(size).put(path.getBytes(StandardCharsets.UTF_8));
        return buffer.flip();
    }

    /**
     * Writes a DATA header; the caller then puts up to {@link #CHUNK} file bytes and flips.
     *
     * @param buffer where the message is written, from its start.
     * @param id     the transfer id.
     * @param offset where in the file the bytes go.
     * @return {@code buffer}, positioned after the header.
     */
    static ByteBuffer dataHeader(final ByteBuffer buffer, final long id, final long offset)
    {
        return header(buffer, DATA, id).putLong(offset);
    }

    /**
     * @param buffer where the message is written, from its start.
     * @param id     the transfer id.
     * @param digest the SHA-256 of the whole file.
     * @return {@code buffer}, flipped: the END message.
     */
    static ByteBuffer end(final ByteBuffer buffer, final long id, final byte[] digest)
    {
        header(buffer, END, id).put(digest, 0, DIGEST_BYTES);
        return buffer.flip();
    }

    /**
     * @param buffer where the message is written, from its start.
     * @param id     the transfer id.
     * @param size   the bytes written.
     * @param digest the SHA-256 of the bytes written.
     * @return {@code buffer}, flipped: the OK message.
     */
    static ByteBuffer ok(final ByteBuffer buffer, final long id, final long size, final byte[] digest)
    {
        header(buffer, OK, id).putLong(size).put(digest, 0, DIGEST_BYTES);
        return buffer.flip();
    }

    /**
     * @param buffer where the message is written, from its start.
     * @param id     the transfer id.
     * @param reason why the transfer failed; cut to {@link #MAX_REASON_BYTES}.
     * @return {@code buffer}, flipped: the ERROR message.
     */
    static ByteBuffer error(final ByteBuffer buffer, final long id, final String reason)
    {
        byte[] bytes = reason.getBytes(StandardCharsets.UTF_8);
        if (bytes.length > MAX_REASON_BYTES)
        {
            bytes = new String(bytes, 0, MAX_REASON_BYTES, StandardCharsets.UTF_8).getBytes(StandardCharsets.UTF_8);
        }
        header(buffer, ERROR, id).put(bytes, 0, Math.min(bytes.length, MAX_REASON_BYTES));
        return buffer.flip();
    }

    private static ByteBuffer header(final ByteBuffer buffer, final byte type, final long id)
    {
        return buffer.clear().putInt(MAGIC).put(type).putLong(id);
    }

    /**
     * @param payload a received message, position to limit; not moved.
     * @return the message, or {@code null} if it is not a well-formed {@code rds cp} message.
     */
    static Message decode(final ByteBuffer payload)
    {
        final ByteBuffer b = payload.slice();
        if (b.remaining() < HEADER || b.getInt() != MAGIC)
        {
            return null;
        }
        final byte type = b.get();
        final long id = b.getLong();
        switch (type)
        {
            case START:
                if (b.remaining() < 8 + 1 || b.remaining() > 8 + MAX_PATH_BYTES)
                {
                    return null;
                }
                final long size = b.getLong();
                return new Message(type, id, size, null, utf8(b), null);
            case DATA:
                if (b.remaining() < 8 || b.remaining() > 8 + CHUNK)
                {
                    return null;
                }
                final long offset = b.getLong();
                return new Message(type, id, offset, null, null, b.slice());
            case END:
                if (b.remaining() != DIGEST_BYTES)
                {
                    return null;
                }
                return new Message(type, id, 0, digest(b), null, null);
            case OK:
                if (b.remaining() != 8 + DIGEST_BYTES)
                {
                    return null;
                }
                final long written = b.getLong();
                return new Message(type, id, written, digest(b), null, null);
            case ERROR:
                return new Message(type, id, 0, null, utf8(b), null);
            default:
                return null;
        }
    }

    private static String utf8(final ByteBuffer b)
    {
        final byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private static byte[] digest(final ByteBuffer b)
    {
        final byte[] digest = new byte[DIGEST_BYTES];
        b.get(digest);
        return digest;
    }

    /** @return a new SHA-256 digest. */
    static MessageDigest sha256()
    {
        try
        {
            return MessageDigest.getInstance("SHA-256");
        }
        catch (final NoSuchAlgorithmException e)
        {
            throw new IllegalStateException("the JDK has no SHA-256", e);
        }
    }

    /**
     * @param bytes any bytes.
     * @return the bytes in lower-case hex.
     */
    static String hex(final byte[] bytes)
    {
        return HexFormat.of().formatHex(bytes);
    }

    /** A target path the server refuses, with the reason sent back in an ERROR. */
    static final class RefusedPathException extends Exception
    {
        private static final long serialVersionUID = 1L;

        /** @param reason why, for the client. */
        RefusedPathException(final String reason)
        {
            super(reason);
        }
    }

    /**
     * Checks a target path against the served directory, lexically: it must be relative, non-empty, name a
     * file (not end with {@code /}), and have no {@code ..} element (even one that would stay inside).
     *
     * @param root     the served directory, absolute and normalised.
     * @param relative the path a client sent.
     * @return the target file, inside {@code root}.
     * @throws RefusedPathException with the reason when the path is refused.
     */
    static Path resolveTarget(final Path root, final String relative) throws RefusedPathException
    {
        if (relative == null || relative.isEmpty())
        {
            throw new RefusedPathException("empty target path");
        }
        if (relative.indexOf('\0') >= 0)
        {
            throw new RefusedPathException("target path contains a NUL character");
        }
        if (relative.startsWith("/") || relative.startsWith("\\"))
        {
            throw new RefusedPathException("absolute target path refused: " + relative);
        }
        if (relative.endsWith("/"))
        {
            throw new RefusedPathException("target path names a directory: " + relative);
        }
        final Path path;
        try
        {
            path = root.getFileSystem().getPath(relative);
        }
        catch (final InvalidPathException e)
        {
            throw new RefusedPathException("invalid target path: " + e.getMessage());
        }
        if (path.isAbsolute() || path.getRoot() != null)
        {
            throw new RefusedPathException("absolute target path refused: " + relative);
        }
        for (final Path element : path)
        {
            if (element.toString().equals(".."))
            {
                throw new RefusedPathException("'..' in the target path refused: " + relative);
            }
        }
        final Path target = root.resolve(path).normalize();
        if (!target.startsWith(root) || target.equals(root) || target.getFileName() == null)
        {
            throw new RefusedPathException("target path is not a file under the served directory: " + relative);
        }
        return target;
    }

    /**
     * Creates the target's missing parent directories, refusing to follow a symbolic link out of the served
     * directory (the lexical check of {@link #resolveTarget} cannot see links).
     *
     * @param realRoot the served directory's real path.
     * @param target   a path {@link #resolveTarget} returned.
     * @throws RefusedPathException when an existing ancestor resolves outside {@code realRoot}, or is not a
     *                              directory.
     * @throws IOException          when a directory cannot be created.
     */
    static void createParents(final Path realRoot, final Path target) throws RefusedPathException, IOException
    {
        final Path parent = target.getParent();
        Path existing = parent;
        while (existing != null && !Files.exists(existing))
        {
            existing = existing.getParent();
        }
        if (existing == null || !existing.toRealPath().startsWith(realRoot))
        {
            throw new RefusedPathException("target path leaves the served directory through a link");
        }
        if (!Files.isDirectory(existing))
        {
            throw new RefusedPathException("a parent of the target path is not a directory");
        }
        Files.createDirectories(parent);
        if (!parent.toRealPath().startsWith(realRoot))
        {
            throw new RefusedPathException("target path leaves the served directory through a link");
        }
        if (Files.isDirectory(target, LinkOption.NOFOLLOW_LINKS))
        {
            throw new RefusedPathException("target path is a directory");
        }
    }
}
