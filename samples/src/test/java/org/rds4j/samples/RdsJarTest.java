package org.rds4j.samples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The runnable jar, {@code target/rds.jar}, as it is shipped: it runs with {@code java -jar}, and it carries
 * rds4j's licence and notice and the licences of what it bundles, as NOTICE describes. Run after package
 * (the samples pom runs it in the integration-test phase).
 */
class RdsJarTest
{
    private static final String JAR_PROPERTY = "rds4j.jar";
    private static final Path ROOT = Paths.get(System.getProperty("rds4j.root", ".."));
    private static final Path JAR = Paths.get(System.getProperty(JAR_PROPERTY, "target/rds.jar"));

    /** Only the run after package sets the jar's path: an earlier one (-Dtest=RdsJarTest) would see no jar. */
    @BeforeAll
    static void afterPackageOnly()
    {
        assumeTrue(System.getProperty(JAR_PROPERTY) != null, "runs in the integration-test phase, after package");
    }

    @Test
    void carriesOurLicenceAndNoticeAndTheBundledLibrariesLicences() throws IOException
    {
        try (ZipFile jar = new ZipFile(JAR.toFile()))
        {
            assertArrayEquals(Files.readAllBytes(ROOT.resolve("LICENSE")), read(jar, "META-INF/LICENSE"));
            assertArrayEquals(Files.readAllBytes(ROOT.resolve("NOTICE")), read(jar, "META-INF/NOTICE"));
            assertTrue(text(jar, "META-INF/LICENSE.txt").contains("QOS.ch"), "SLF4J's MIT licence");
            assertTrue(text(jar, "META-INF/HdrHistogram-LICENSE.txt").contains("Gil Tene"), "HdrHistogram's licence");
            assertTrue(text(jar, "META-INF/JNA-LICENSE").contains("Java Native Access"), "JNA's licence statement");
            assertTrue(text(jar, "META-INF/jackson-core-NOTICE").contains("Schubfach"), "jackson-core's NOTICE");
            assertTrue(text(jar, "META-INF/jackson-jr-NOTICE").contains("Jackson"), "jackson-jr's NOTICE");
            assertTrue(text(jar, "META-INF/Schubfach-LICENSE").contains("Giulietti"), "Schubfach's licence");
            // a merged jar is no module: the modules' descriptors stay out of it
            assertEquals(null, jar.getEntry("module-info.class"));
        }
    }

    /** JNA loads its native library: on JDK 24+ that warns at every start unless the jar enables native access. */
    @Test
    void enablesNativeAccessForJavaJar() throws IOException
    {
        try (JarFile jar = new JarFile(JAR.toFile()))
        {
            assertEquals("ALL-UNNAMED", jar.getManifest().getMainAttributes().getValue("Enable-Native-Access"));
        }
    }

    @Test
    void noticeNamesEveryBundledLibrary() throws IOException
    {
        final String notice = Files.readString(ROOT.resolve("NOTICE"), StandardCharsets.UTF_8);
        try (ZipFile jar = new ZipFile(JAR.toFile()))
        {
            final List<String[]> bundled = List.of(
                new String[] {"picocli/CommandLine.class", "info.picocli:picocli"},
                new String[] {"org/HdrHistogram/Histogram.class", "org.hdrhistogram:HdrHistogram"},
                new String[] {"org/agrona/DirectBuffer.class", "org.agrona:agrona"},
                new String[] {"org/jctools/queues/MpmcArrayQueue.class", "org.jctools:jctools-core"},
                new String[] {"com/sun/jna/Native.class", "net.java.dev.jna:jna"},
                new String[] {"org/slf4j/Logger.class", "org.slf4j:slf4j-api"},
                new String[] {"org/slf4j/simple/SimpleLogger.class", "org.slf4j:slf4j-simple"},
                new String[] {"com/fasterxml/jackson/jr/ob/JSON.class", "com.fasterxml.jackson.jr:jackson-jr-objects"},
                new String[] {"com/fasterxml/jackson/core/JsonFactory.class", "com.fasterxml.jackson.core:jackson-core"});
            for (final String[] library : bundled)
            {
                assertNotNull(jar.getEntry(library[0]), library[0] + " is not in the jar: update this test and NOTICE");
                assertTrue(notice.contains("(" + library[1] + ")"), "NOTICE does not name " + library[1]);
            }
        }
    }

    @Test
    void runsWithJavaJar() throws IOException, InterruptedException
    {
        final Path log = Files.createTempFile("rds-jar", ".log");
        try
        {
            final Process process = new ProcessBuilder(Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar", JAR.toString(), "--version").redirectErrorStream(true).redirectOutput(log.toFile()).start();
            if (!process.waitFor(30, TimeUnit.SECONDS))
            {
                process.destroyForcibly().waitFor();
                throw new AssertionError("java -jar rds.jar --version did not end within 30 s");
            }
            final String output = Files.readString(log, StandardCharsets.UTF_8);
            assertEquals(0, process.exitValue(), output);
            assertEquals("rds4j " + System.getProperty("rds4j.version") + "\n", output);
        }
        finally
        {
            Files.delete(log);
        }
    }

    private static byte[] read(final ZipFile jar, final String name) throws IOException
    {
        final ZipEntry entry = jar.getEntry(name);
        assertNotNull(entry, name + " is missing from " + JAR);
        try (InputStream in = jar.getInputStream(entry))
        {
            return in.readAllBytes();
        }
    }

    private static String text(final ZipFile jar, final String name) throws IOException
    {
        return new String(read(jar, name), StandardCharsets.UTF_8);
    }
}
