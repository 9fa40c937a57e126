package org.rds4j.core;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The permissions of a driver's directory and files: its user only, or its user and group where a deployment runs
 * the driver and its clients as different users of one group. Whoever can open the socket or map the files can
 * use the driver's stack, so nothing else may.
 */
final class DriverFiles
{
    private static final Set<PosixFilePermission> DIRECTORY_OWNER = PosixFilePermissions.fromString("rwx------");
    private static final Set<PosixFilePermission> DIRECTORY_GROUP = PosixFilePermissions.fromString("rwxrwx---");
    private static final Set<PosixFilePermission> FILE_OWNER = PosixFilePermissions.fromString("rw-------");
    private static final Set<PosixFilePermission> FILE_GROUP = PosixFilePermissions.fromString("rw-rw----");

    private DriverFiles()
    {
    }

    /**
     * Makes the directory (and its parents) if needed and sets its permissions.
     *
     * @param directory the driver's directory.
     * @param group     whether the group may use the driver too.
     * @throws IOException if it cannot be made or its permissions set.
     */
    static void prepareDirectory(final Path directory, final boolean group) throws IOException
    {
        Files.createDirectories(directory);
        Files.setPosixFilePermissions(directory, group ? DIRECTORY_GROUP : DIRECTORY_OWNER);
    }

    /**
     * @param file  a file of the driver's.
     * @param group whether the group may use it too.
     * @throws IOException if its permissions cannot be set.
     */
    static void restrict(final Path file, final boolean group) throws IOException
    {
        Files.setPosixFilePermissions(file, group ? FILE_GROUP : FILE_OWNER);
    }
}
