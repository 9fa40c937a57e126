package org.rds4j.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.io.IOException;
import java.lang.module.Configuration;
import java.lang.module.ModuleDescriptor;
import java.lang.module.ModuleFinder;
import java.lang.module.ResolvedModule;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

/**
 * The library modules' descriptors (module-info.java) resolve as an application sees them, and {@code rds}
 * runs from the same jars on the module path as on the class path. The paths come from the build (the
 * samples pom): this module's classes and its runtime dependencies.
 */
class ModulePathTest
{
    private static final String MAIN_MODULE = "org.rds4j.samples";
    private static final String MAIN_CLASS = "org.rds4j.samples.RdsCli";

    @Test
    void descriptorsExportTheApiAndKeepInternalsInside()
    {
        final Map<String, ModuleDescriptor> modules = new TreeMap<>();
        for (final ResolvedModule module : resolve().modules())
        {
            modules.put(module.name(), module.reference().descriptor());
        }

        assertEquals(Set.of("org.rds4j"), exports(modules.get("org.rds4j")));
        assertEquals(Set.of("org.rds4j.core", "org.rds4j.core.spi",
            "org.rds4j.core.wire to [org.rds4j.transport.ib, org.rds4j.transport.tcp]"),
            exports(modules.get("org.rds4j.core")));
        assertEquals(Set.of("org.rds4j.transport.tcp"), exports(modules.get("org.rds4j.transport.tcp")));
        assertEquals(Set.of("org.rds4j.transport.ib"), exports(modules.get("org.rds4j.transport.ib")));

        assertEquals(Set.of("org.rds4j.RdsStackProvider"), modules.get("org.rds4j").uses());
        assertEquals(Set.of("org.rds4j.core.spi.TransportFactory"), modules.get("org.rds4j.core").uses());
        assertEquals(Set.of("org.rds4j.RdsStackProvider with [org.rds4j.core.CoreStackProvider]"),
            provides(modules.get("org.rds4j.core")));
        assertEquals(Set.of("org.rds4j.core.spi.TransportFactory with [org.rds4j.transport.tcp.TcpTransportFactory]"),
            provides(modules.get("org.rds4j.transport.tcp")));
        assertEquals(Set.of("org.rds4j.core.spi.TransportFactory with [org.rds4j.transport.ib.IbTransportFactory]"),
            provides(modules.get("org.rds4j.transport.ib")));
        for (final String library : List.of("org.rds4j", "org.rds4j.core", "org.rds4j.transport.tcp", "org.rds4j.transport.ib"))
        {
            assertFalse(modules.get(library).isAutomatic(), library + " has no module descriptor");
        }
    }

    @Test
    void bindingTheServicesBringsInTheStackBothTransportsAndTheLogger()
    {
        final Set<String> resolved = resolve().modules().stream().map(ResolvedModule::name).collect(Collectors.toCollection(TreeSet::new));

        // samples requires neither rds-core's provider nor transport-ib nor a logging binding: they are bound
        assertTrue(resolved.containsAll(Set.of("org.rds4j", "org.rds4j.core", "org.rds4j.transport.tcp",
            "org.rds4j.transport.ib", "org.slf4j", "org.slf4j.simple", "org.agrona.core", "org.jctools.core",
            "com.sun.jna")), resolved.toString());
    }

    @Test
    void versionOnTheModulePathIsTheModules() throws Exception
    {
        final List<String> command = moduleCommand();
        command.add("--version");

        assertEquals("rds4j " + System.getProperty("rds4j.version") + "\n", run(command));
    }

    @Test
    void rdsRunsOnTheModulePath() throws Exception
    {
        final String output = runDemo(moduleCommand("--show-module-resolution"));

        // it ran as named modules: the resolver's trace shows the root and the transports bound as services
        assertTrue(output.contains("root org.rds4j.samples "), output);
        assertTrue(output.contains("org.rds4j.core binds org.rds4j.transport.tcp "), output);
    }

    @Test
    void rdsRunsOnTheClassPath() throws Exception
    {
        final List<String> command = javaCommand();
        command.add("--class-path");
        command.add(pathArgument());
        command.add(MAIN_CLASS);
        runDemo(command);
    }

    /** Runs {@code rds demo} over TCP on 127.0.0.1-3 in its own JVM; asserts it delivered every message. */
    private static String runDemo(final List<String> command) throws IOException, InterruptedException
    {
        final int tcpPort = TestPorts.freeTcpPort(26795, "127.0.0.1", "127.0.0.2", "127.0.0.3");
        command.addAll(List.of("demo", "--messages", "20", "--transport", "tcp", "--tcp-port", String.valueOf(tcpPort)));
        final String output = run(command);
        assertTrue(output.contains("demo: OK, 120 of 120 messages delivered"), output);
        return output;
    }

    /** @return the output (standard and error) of the command, which must exit 0 within 60 s. */
    private static String run(final List<String> command) throws IOException, InterruptedException
    {
        final Path log = Files.createTempFile("rds-module-path", ".log");
        try
        {
            final Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            if (!process.waitFor(60, TimeUnit.SECONDS))
            {
                process.destroyForcibly().waitFor();
                throw new AssertionError("did not end within 60 s: " + command + "\n" + Files.readString(log));
            }
            final String output = Files.readString(log, StandardCharsets.UTF_8);
            assertEquals(0, process.exitValue(), command + "\n" + output);
            return output;
        }
        finally
        {
            Files.delete(log);
        }
    }

    /**
     * @param options JVM options.
     * @return {@code java OPTIONS --module-path ... --module org.rds4j.samples/...}, for the caller to add rds's
     *         arguments to.
     */
    private static List<String> moduleCommand(final String... options)
    {
        final List<String> command = javaCommand();
        command.addAll(List.of(options));
        command.add("--module-path");
        command.add(pathArgument());
        command.add("--module");
        command.add(MAIN_MODULE + "/" + MAIN_CLASS);
        return command;
    }

    private static List<String> javaCommand()
    {
        final List<String> command = new ArrayList<>();
        command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx256m");
        return command;
    }

    /** This module's classes and its runtime dependencies: jars, or the modules' classes directories. */
    private static List<Path> modulePath()
    {
        final String runtime = System.getProperty("rds4j.runtime.path");
        final String classes = System.getProperty("rds4j.samples.classes");
        assertTrue(runtime != null && classes != null, "run by Maven: the samples pom sets rds4j.runtime.path");
        final List<Path> path = new ArrayList<>();
        path.add(Paths.get(classes));
        for (final String entry : runtime.split(File.pathSeparator))
        {
            path.add(Paths.get(entry));
        }
        return path;
    }

    /** @return {@link #modulePath()} as the argument of --module-path or --class-path. */
    private static String pathArgument()
    {
        return modulePath().stream().map(Path::toString).collect(Collectors.joining(File.pathSeparator));
    }

    /** Resolves the main module and binds the services, as {@code java -m} does. */
    private static Configuration resolve()
    {
        final ModuleFinder finder = ModuleFinder.of(modulePath().toArray(new Path[0]));
        return ModuleLayer.boot().configuration().resolveAndBind(finder, ModuleFinder.of(), Set.of(MAIN_MODULE));
    }

    private static Set<String> exports(final ModuleDescriptor module)
    {
        return module.exports().stream()
            .map(e -> e.isQualified() ? e.source() + " to " + new TreeSet<>(e.targets()) : e.source())
            .collect(Collectors.toSet());
    }

    private static Set<String> provides(final ModuleDescriptor module)
    {
        return module.provides().stream().map(p -> p.service() + " with " + p.providers()).collect(Collectors.toSet());
    }
}
