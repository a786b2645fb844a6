package dev.iomap.api;

/**
 * A device number ({@code dev_t}) as Linux user space sees it in {@code st_rdev}: glibc's
 * {@code makedev} encoding, a 32-bit major and a 32-bit minor in one {@code long} (the low 8 bits of the
 * minor, then 12 bits of the major, then the minor's next 12 bits, then the rest of each). Numbers with a
 * major below 4,096 and a minor below 2<sup>20</sup> are also the kernel's own 32-bit encoding
 * ({@code new_encode_dev}), which FUSE carries. Stateless.
 */
public final class DeviceNumber {

    private DeviceNumber() {
    }

    /**
     * @param major the major number, 0 to 2<sup>32</sup>-1
     * @param minor the minor number, 0 to 2<sup>32</sup>-1
     * @return {@code makedev(major, minor)}
     * @throws IllegalArgumentException if either is out of range
     */
    public static long of(long major, long minor) {
        if (major < 0 || major > 0xffff_ffffL || minor < 0 || minor > 0xffff_ffffL) {
            throw new IllegalArgumentException("major " + major + " and minor " + minor + " must be 0 to 2^32-1");
        }
        return ((major & 0xffff_f000L) << 32) | ((major & 0xfffL) << 8) | ((minor & 0xffff_ff00L) << 12)
                | (minor & 0xffL);
    }

    /**
     * @param rdev a device number
     * @return its major number ({@code major(rdev)})
     */
    public static long major(long rdev) {
        return ((rdev >>> 32) & 0xffff_f000L) | ((rdev >>> 8) & 0xfffL);
    }

    /**
     * @param rdev a device number
     * @return its minor number ({@code minor(rdev)})
     */
    public static long minor(long rdev) {
        return ((rdev >>> 12) & 0xffff_ff00L) | (rdev & 0xffL);
    }
}
