package dev.iomap.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Loop devices for {@code fuseblk} mounts ({@code iomap mount --blkdev}, or a loop device given as IMAGE):
 * the kernel holds the loop device while mounted; the mount reads and writes the loop device's backing file
 * itself, never the loop device. {@code losetup} (util-linux) attaches and detaches them.
 */
final class LoopDevice {
    private static final long LOSETUP_SECONDS = 30;

    private LoopDevice() {
    }

    /**
     * @param path IMAGE as given
     * @return whether it is a block device
     * @throws IOException if its type cannot be read
     */
    static boolean isBlockDevice(Path path) throws IOException {
        if (!Files.exists(path)) {
            return false;
        }
        int mode = (Integer) Files.getAttribute(path, "unix:mode");
        return (mode & 0170000) == 0060000;
    }

    /**
     * @param device a block device
     * @return whether it is write-protected ({@code /sys/block/NAME/ro}: {@code blockdev --setro}, a
     *     read-only loop device)
     * @throws IOException if sysfs cannot be read
     */
    static boolean isReadOnly(Path device) throws IOException {
        String name = device.toRealPath().getFileName().toString();
        return Files.readString(Path.of("/sys/block", name, "ro"), StandardCharsets.UTF_8).strip().equals("1");
    }

    /**
     * @param device a block device
     * @return the file a loop device reads and writes ({@code /sys/block/loopN/loop/backing_file})
     * @throws UsageException if it is not a loop device, or has no backing file
     * @throws IOException if sysfs cannot be read
     */
    static Path backingFile(Path device) throws IOException, UsageException {
        String name = device.toRealPath().getFileName().toString();
        Path backing = Path.of("/sys/block", name, "loop", "backing_file");
        try {
            String file = Files.readString(backing, StandardCharsets.UTF_8).strip();
            if (file.isEmpty()) {
                throw new UsageException(device + " is a loop device without a backing file: losetup it first");
            }
            return Path.of(file.replaceFirst(" \\(deleted\\)$", ""));
        } catch (NoSuchFileException e) {
            throw new UsageException(device + " is a block device but not a loop device (or not attached):"
                    + " iomap mounts image files, or loop devices over them");
        }
    }

    /**
     * {@code losetup --find --show IMAGE}.
     *
     * @param image an image file
     * @return the loop device now over it
     * @throws IOException if losetup fails (not root, no free loop device)
     */
    static Path attach(Path image) throws IOException {
        return Path.of(losetup("--find", "--show", image.toAbsolutePath().toString()));
    }

    /**
     * {@code losetup -d DEVICE}: on a device the kernel holds (mounted), Linux only marks it to be detached
     * when the last user lets go (autoclear), so a loop device attached for a mount goes with its unmount.
     *
     * @param device a loop device
     * @throws IOException if losetup fails
     */
    static void detach(Path device) throws IOException {
        losetup("-d", device.toString());
    }

    private static String losetup(String... args) throws IOException {
        var command = new java.util.ArrayList<String>();
        command.add("losetup");
        command.addAll(java.util.List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        try {
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
            if (!process.waitFor(LOSETUP_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException(String.join(" ", command) + " did not finish in " + LOSETUP_SECONDS + " s");
            }
            if (process.exitValue() != 0) {
                throw new IOException(String.join(" ", command) + " failed: " + output);
            }
            return output;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException(String.join(" ", command) + " interrupted", e);
        }
    }
}
