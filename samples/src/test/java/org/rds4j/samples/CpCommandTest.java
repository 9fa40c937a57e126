package org.rds4j.samples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.Writer;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import picocli.CommandLine;

class CpCommandTest
{
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path root;

    private Path serveDir;
    private Path sourceDir;

    @BeforeEach
    void directories() throws IOException
    {
        serveDir = Files.createDirectory(root.resolve("serve"));
        sourceDir = Files.createDirectory(root.resolve("source"));
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void copiesFilesOfAnySizeExactly() throws Exception
    {
        final int tcpPort = TestPorts.freeTcpPort(26640,
            "127.0.10.1", "127.0.10.2", "127.0.10.3", "127.0.10.4", "127.0.10.5", "127.0.10.6");
        final Random random = new Random(7);
        final byte[] one = {(byte)0xA5};
        final byte[] big = new byte[5 * 1024 * 1024 + 123];
        random.nextBytes(big);

        copyAndCheck(tcpPort, "127.0.10.1", "127.0.10.2", "empty.bin", new byte[0], "empty.bin");
        copyAndCheck(tcpPort, "127.0.10.3", "127.0.10.4", "one.bin", one, "one.bin");
        copyAndCheck(tcpPort, "127.0.10.5", "127.0.10.6", "big.bin", big, "sub/dir/big.bin");

        assertEquals(List.of(), temporaryFiles(), "temporary files left behind");
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void pathsOutsideTheDirectoryAreRefused() throws Exception
    {
        final int tcpPort = TestPorts.freeTcpPort(26660, "127.0.10.7", "127.0.10.8", "127.0.10.9", "127.0.10.10");
        final Path source = Files.write(sourceDir.resolve("x"), "escape".getBytes(StandardCharsets.US_ASCII));

        final Transfer dotDot = copyOnce(tcpPort, "127.0.10.7", "127.0.10.8", source, "../x");
        assertNotEquals(0, dotDot.client.code(), dotDot.report());
        assertTrue(dotDot.client.err().contains("refused by the server"), dotDot.report());
        assertTrue(dotDot.client.err().contains("'..'"), dotDot.report());
        assertEquals(CpCommand.EXIT_FAILED, dotDot.serverCode, dotDot.report());
        assertTrue(dotDot.serverOut.contains("cp: refused ../x"), dotDot.report());

        final Path absolute = root.resolve("absolute.bin");
        final Transfer abs = copyOnce(tcpPort, "127.0.10.9", "127.0.10.10", source, absolute.toString());
        assertNotEquals(0, abs.client.code(), abs.report());
        assertTrue(abs.client.err().contains("absolute target path refused"), abs.report());
        assertEquals(CpCommand.EXIT_FAILED, abs.serverCode, abs.report());

        assertFalse(Files.exists(root.resolve("x")), "written outside the served directory");
        assertFalse(Files.exists(absolute), "written at an absolute path");
        try (Stream<Path> files = Files.list(serveDir))
        {
            assertEquals(List.of(), files.collect(Collectors.toList()), "something written in the served directory");
        }
    }

    @Test
    void clientDetectsADigestMismatch()
    {
        final byte[] sent = CpProtocol.sha256().digest("abc".getBytes(StandardCharsets.US_ASCII));
        final byte[] other = CpProtocol.sha256().digest("abd".getBytes(StandardCharsets.US_ASCII));
        final ByteBuffer buffer = ByteBuffer.allocate(CpProtocol.MAX_MESSAGE);

        assertNull(CpCommand.verifyReply(CpProtocol.decode(CpProtocol.ok(buffer, 7, 3, sent)), 7, 3, sent));

        final String mismatch = CpCommand.verifyReply(CpProtocol.decode(CpProtocol.ok(buffer, 7, 3, other)), 7, 3, sent);
        assertNotNull(mismatch);
        assertTrue(mismatch.contains("SHA-256 mismatch"), mismatch);
        assertTrue(mismatch.contains(CpProtocol.hex(other)), mismatch);

        assertTrue(CpCommand.verifyReply(CpProtocol.decode(CpProtocol.ok(buffer, 7, 4, sent)), 7, 3, sent).contains("wrote 4 bytes"));
        assertTrue(CpCommand.verifyReply(CpProtocol.decode(CpProtocol.ok(buffer, 8, 3, sent)), 7, 3, sent).contains("another transfer"));
        assertTrue(CpCommand.verifyReply(CpProtocol.decode(CpProtocol.error(buffer, 7, "disk full")), 7, 3, sent)
            .equals("refused by the server: disk full"));
        assertTrue(CpCommand.verifyReply(CpProtocol.decode(CpProtocol.ok(buffer, 7, 3, sent)), 7, 3, null).contains("before the whole file"));
        assertTrue(CpCommand.verifyReply(null, 7, 3, sent).contains("no reply"));
    }

    @Test
    void messagesRoundTrip()
    {
        final ByteBuffer buffer = ByteBuffer.allocate(CpProtocol.MAX_MESSAGE);
        final CpProtocol.Message start = CpProtocol.decode(CpProtocol.start(buffer, -5, 1234, "dir/ä:b"));
        assertEquals(CpProtocol.START, start.type());
        assertEquals(-5, start.id());
        assertEquals(1234, start.number());
        assertEquals("dir/ä:b", start.text());

        CpProtocol.dataHeader(buffer, 9, 65536).put(new byte[] {1, 2, 3}).flip();
        final CpProtocol.Message data = CpProtocol.decode(buffer);
        assertEquals(CpProtocol.DATA, data.type());
        assertEquals(65536, data.number());
        final byte[] bytes = new byte[data.data().remaining()];
        data.data().get(bytes);
        assertArrayEquals(new byte[] {1, 2, 3}, bytes);

        final byte[] digest = CpProtocol.sha256().digest(new byte[0]);
        final CpProtocol.Message end = CpProtocol.decode(CpProtocol.end(buffer, 9, digest));
        assertEquals(CpProtocol.END, end.type());
        assertArrayEquals(digest, end.digest());

        assertNull(CpProtocol.decode(ByteBuffer.wrap(new byte[] {1, 2, 3})));
        assertNull(CpProtocol.decode(ByteBuffer.allocate(40))); // wrong magic
        assertNull(CpProtocol.decode(CpProtocol.end(buffer, 9, digest).limit(CpProtocol.HEADER + 5))); // short END
    }

    @Test
    void targetPathsAreCheckedAgainstTheDirectory() throws Exception
    {
        final Path base = serveDir.toAbsolutePath().normalize();
        assertEquals(base.resolve("a/b.bin"), CpProtocol.resolveTarget(base, "a/b.bin"));
        assertEquals(base.resolve("a.bin"), CpProtocol.resolveTarget(base, "./a.bin"));
        for (final String bad : new String[] {"../x", "a/../../x", "a/../b", "..", "/etc/passwd", "", "dir/", "a\0b", ".", "./"})
        {
            assertThrows(CpProtocol.RefusedPathException.class, () -> CpProtocol.resolveTarget(base, bad), bad);
        }

        // a link inside the directory to a directory outside it passes the lexical check, not the real one
        final Path outside = Files.createDirectory(root.resolve("outside"));
        Files.createSymbolicLink(serveDir.resolve("link"), outside);
        final Path viaLink = CpProtocol.resolveTarget(base, "link/deeper/x");
        assertThrows(CpProtocol.RefusedPathException.class, () -> CpProtocol.createParents(serveDir.toRealPath(), viaLink));
        assertFalse(Files.exists(outside.resolve("deeper")));
    }

    @Test
    void destinationsParse() throws Exception
    {
        final CpCommand.Destination v4 = CpCommand.Destination.parse("127.0.0.2:4000:a/b:c.bin");
        assertEquals("127.0.0.2:4000", IpPortConverter.format(v4.node()));
        assertEquals("a/b:c.bin", v4.path());
        final CpCommand.Destination v6 = CpCommand.Destination.parse("[::1]:4000:");
        assertEquals(4000, v6.node().getPort());
        assertEquals("", v6.path());
        for (final String bad : new String[] {"127.0.0.2:4000", "127.0.0.2", "[::1]:4000", "127.0.0.2:1:x", "host:4000:x", "[::1]4000:x"})
        {
            assertThrows(CommandLine.TypeConversionException.class, () -> CpCommand.Destination.parse(bad), bad);
        }
    }

    @Test
    void badArgumentsAreUsageErrors()
    {
        CliRun.assertUsageError("expected SRC IP:PORT:PATH", "cp", "onlyone");
        CliRun.assertUsageError("expected IP:PORT:PATH", "cp", "a", "127.0.0.1:4000");
        CliRun.assertUsageError("--serve needs --bind", "cp", "--serve", serveDir.toString());
        CliRun.assertUsageError("not a directory", "cp", "--serve", root.resolve("missing").toString(), "--bind", "127.0.0.1:4000");
        CliRun.assertUsageError("--serve takes no SRC", "cp", "--serve", serveDir.toString(), "--bind", "127.0.0.1:4000", "a");
        CliRun.assertUsageError("is a server option", "cp", "a", "127.0.0.1:4000:b", "--once");
        CliRun.assertUsageError("is a client option", "cp", "--serve", serveDir.toString(), "--bind", "127.0.0.1:4000", "-I", "127.0.0.1");
        CliRun.assertUsageError("port must be 2..65535", "cp", "--serve", serveDir.toString(), "--bind", "127.0.0.1:0");
    }

    @Test
    void aMissingSourceFails()
    {
        final CliRun run = CliRun.run("cp", sourceDir.resolve("missing").toString(), "127.0.10.1:4000:x");
        assertEquals(CpCommand.EXIT_FAILED, run.code(), run.report());
        assertTrue(run.err().contains("not a regular file"), run.report());
    }

    private void copyAndCheck(final int tcpPort, final String serverIp, final String clientIp, final String name,
        final byte[] content, final String targetPath) throws Exception
    {
        final Path source = Files.write(sourceDir.resolve(name), content);
        final Transfer transfer = copyOnce(tcpPort, serverIp, clientIp, source, targetPath);
        assertEquals(0, transfer.client.code(), transfer.report());
        assertEquals(0, transfer.serverCode, transfer.report());
        assertTrue(transfer.client.out().contains(" " + content.length + " bytes in "), transfer.report());
        assertTrue(transfer.serverOut.contains("cp: received " + targetPath + " (" + content.length + " bytes"), transfer.report());
        assertArrayEquals(content, Files.readAllBytes(serveDir.resolve(targetPath)), targetPath);
    }

    /** Runs {@code rds cp --serve --once} on a thread and {@code rds cp} against it; both to their end. */
    private Transfer copyOnce(final int tcpPort, final String serverIp, final String clientIp, final Path source,
        final String targetPath) throws Exception
    {
        final String serverNode = serverIp + ":4000";
        final AwaitableWriter serverOut = new AwaitableWriter();
        final StringWriter serverErr = new StringWriter();
        final CommandLine server = new CommandLine(new RdsCli());
        server.setOut(new PrintWriter(serverOut, true));
        server.setErr(new PrintWriter(serverErr, true));
        final AtomicInteger serverCode = new AtomicInteger(-1);
        final Thread serverThread = new Thread(() -> serverCode.set(server.execute("cp", "--serve", serveDir.toString(),
            "--bind", serverNode, "--once", "--tcp-port", String.valueOf(tcpPort))), "cp-server-" + serverIp);
        serverThread.setDaemon(true);
        serverThread.start();
        assertTrue(serverOut.await("cp: serving", WAIT), () -> "server did not start: " + serverOut + serverErr);

        final CliRun client = CliRun.run("cp", source.toString(), serverNode + ":" + targetPath, "-I", clientIp,
            "--tcp-port", String.valueOf(tcpPort), "--timeout", "20");

        serverThread.join(WAIT.toMillis());
        assertFalse(serverThread.isAlive(), () -> "server still running after the client ended: " + client.report() +
            "\nserver output:\n" + serverOut + serverErr);
        return new Transfer(client, serverCode.get(), serverOut.toString() + serverErr);
    }

    private List<Path> temporaryFiles() throws IOException
    {
        try (Stream<Path> files = Files.walk(serveDir))
        {
            return files.filter(p -> p.getFileName().toString().endsWith(".rdscp-tmp")).collect(Collectors.toList());
        }
    }


    private record Transfer(CliRun client, int serverCode, String serverOut)
    {
        String report()
        {
            return "client: " + client.report() + "\nserver -> " + serverCode + ":\n" + serverOut;
        }
    }

    /** A writer whose text can be awaited, so that a test waits for a line with a deadline instead of sleeping. */
    private static final class AwaitableWriter extends Writer
    {
        private final StringBuilder text = new StringBuilder();

        @Override
        public synchronized void write(final char[] chars, final int offset, final int length)
        {
            text.append(chars, offset, length);
            notifyAll();
        }

        @Override
        public void flush()
        {
        }

        @Override
        public void close()
        {
        }

        synchronized boolean await(final String wanted, final Duration limit) throws InterruptedException
        {
            final long deadline = System.nanoTime() + limit.toNanos();
            long left;
            while (text.indexOf(wanted) < 0 && (left = deadline - System.nanoTime()) > 0)
            {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            return text.indexOf(wanted) >= 0;
        }

        @Override
        public synchronized String toString()
        {
            return text.toString();
        }
    }
}
