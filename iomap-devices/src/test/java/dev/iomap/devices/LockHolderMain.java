package dev.iomap.devices;

import dev.iomap.device.DeviceBusyException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A second process for {@link ImageLockTest}. {@code args[0]} says what to do with the image
 * {@code args[1]}:
 * <ul>
 *   <li>{@code hold-rw}, {@code hold-ro}: open it as a device for writing or read-only, print
 *       {@code held}, and keep it open until standard input closes;</li>
 *   <li>{@code hold-filelock}: take a classic fcntl record lock ({@code FileChannel.lock}) on it,
 *       print {@code held}, and keep it until standard input closes;</li>
 *   <li>{@code try-rw}, {@code try-ro}: try to open it so, close it at once, and print
 *       {@code opened} or {@code busy: MESSAGE}.</li>
 * </ul>
 * Block size 4096; the image must exist and be whole blocks.
 */
public final class LockHolderMain {

    private LockHolderMain() {
    }

    /** @param args what to do, the image */
    public static void main(String[] args) throws IOException {
        Path image = Path.of(args[1]);
        switch (args[0]) {
            case "hold-rw" -> {
                try (var device = FileBlockDevice.open(image, 4096, false)) {
                    holdUntilStdinCloses(device.toString());
                }
            }
            case "hold-ro" -> {
                try (var device = FileBlockDevice.openReadOnly(image, 4096, false)) {
                    holdUntilStdinCloses(device.toString());
                }
            }
            case "hold-filelock" -> {
                try (var channel = FileChannel.open(image, StandardOpenOption.READ, StandardOpenOption.WRITE);
                        var lock = channel.lock()) {
                    holdUntilStdinCloses(lock.toString());
                }
            }
            case "try-rw", "try-ro" -> {
                try (var device = args[0].equals("try-rw")
                        ? FileBlockDevice.open(image, 4096, false)
                        : FileBlockDevice.openReadOnly(image, 4096, false)) {
                    System.out.println(device.readOnly() == args[0].equals("try-ro") ? "opened" : "wrong mode");
                } catch (DeviceBusyException e) {
                    System.out.println("busy: " + e.getMessage());
                }
            }
            default -> throw new IllegalArgumentException("unknown action " + args[0]);
        }
    }

    /** @param what what is held, for the log */
    private static void holdUntilStdinCloses(String what) throws IOException {
        System.err.println("LockHolderMain holds " + what);
        System.out.println("held");
        System.out.flush();
        while (System.in.read() >= 0) {
            // held until the test closes our standard input
        }
    }
}
