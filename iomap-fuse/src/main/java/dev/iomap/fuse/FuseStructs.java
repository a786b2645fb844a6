package dev.iomap.fuse;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_DOUBLE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.time.Instant;

/**
 * The C structs of libfuse 3's low-level API and of glibc that the binding reads and writes, as
 * {@link StructLayout}s with the C field names (so {@code FuseStructsTest} compares every offset and
 * size with what gcc says of the installed headers), and the offsets the binding uses.
 *
 * <p>Only 64-bit Linux on x86-64 ({@code amd64}) and AArch64 ({@code aarch64}) is described. libfuse's
 * structs and glibc's {@code struct statvfs}, {@code struct timespec} are the same on both (LP64, the
 * same field order); {@code struct stat} is not: x86-64 has its own order ({@code st_nlink} a 64-bit
 * word before {@code st_mode}, 144 bytes), AArch64 uses the generic one ({@code st_mode} before a 32-bit
 * {@code st_nlink}, 128 bytes), and both are written out here from glibc's {@code bits/struct_stat.h}.
 * Any other architecture is refused ({@link #check}) before anything is mounted.
 */
final class FuseStructs {
    /** {@code os.arch} of the two architectures described. */
    static final String AMD64 = "amd64";
    static final String AARCH64 = "aarch64";

    /** {@code struct timespec}. */
    static final StructLayout TIMESPEC = MemoryLayout.structLayout(JAVA_LONG.withName("tv_sec"),
            JAVA_LONG.withName("tv_nsec"));

    /** {@code struct stat} of glibc on x86-64 ({@code bits/struct_stat.h}, {@code __x86_64__}). */
    static final StructLayout STAT_AMD64 = MemoryLayout.structLayout(
            JAVA_LONG.withName("st_dev"), JAVA_LONG.withName("st_ino"), JAVA_LONG.withName("st_nlink"),
            JAVA_INT.withName("st_mode"), JAVA_INT.withName("st_uid"), JAVA_INT.withName("st_gid"),
            JAVA_INT.withName("__pad0"), JAVA_LONG.withName("st_rdev"), JAVA_LONG.withName("st_size"),
            JAVA_LONG.withName("st_blksize"), JAVA_LONG.withName("st_blocks"), TIMESPEC.withName("st_atim"),
            TIMESPEC.withName("st_mtim"), TIMESPEC.withName("st_ctim"),
            MemoryLayout.sequenceLayout(3, JAVA_LONG).withName("__glibc_reserved"));

    /** {@code struct stat} of glibc on AArch64 (the generic layout, {@code asm-generic/stat.h}). */
    static final StructLayout STAT_AARCH64 = MemoryLayout.structLayout(
            JAVA_LONG.withName("st_dev"), JAVA_LONG.withName("st_ino"), JAVA_INT.withName("st_mode"),
            JAVA_INT.withName("st_nlink"), JAVA_INT.withName("st_uid"), JAVA_INT.withName("st_gid"),
            JAVA_LONG.withName("st_rdev"), JAVA_LONG.withName("__pad1"), JAVA_LONG.withName("st_size"),
            JAVA_INT.withName("st_blksize"), JAVA_INT.withName("__pad2"), JAVA_LONG.withName("st_blocks"),
            TIMESPEC.withName("st_atim"), TIMESPEC.withName("st_mtim"), TIMESPEC.withName("st_ctim"),
            MemoryLayout.sequenceLayout(2, JAVA_INT).withName("__glibc_reserved"));

    /** {@code struct stat} of this machine ({@link #check} refuses any other). */
    static final StructLayout STAT = AARCH64.equals(System.getProperty("os.arch")) ? STAT_AARCH64 : STAT_AMD64;

    /** {@code struct statvfs} (glibc, LP64). */
    static final StructLayout STATVFS = MemoryLayout.structLayout(
            JAVA_LONG.withName("f_bsize"), JAVA_LONG.withName("f_frsize"), JAVA_LONG.withName("f_blocks"),
            JAVA_LONG.withName("f_bfree"), JAVA_LONG.withName("f_bavail"), JAVA_LONG.withName("f_files"),
            JAVA_LONG.withName("f_ffree"), JAVA_LONG.withName("f_favail"), JAVA_LONG.withName("f_fsid"),
            JAVA_LONG.withName("f_flag"), JAVA_LONG.withName("f_namemax"),
            MemoryLayout.sequenceLayout(6, JAVA_INT).withName("__f_spare"));

    /** {@code struct fuse_entry_param} (fuse_lowlevel.h). */
    static final StructLayout ENTRY_PARAM = MemoryLayout.structLayout(
            JAVA_LONG.withName("ino"), JAVA_LONG.withName("generation"), STAT.withName("attr"),
            JAVA_DOUBLE.withName("attr_timeout"), JAVA_DOUBLE.withName("entry_timeout"));

    /**
     * {@code struct fuse_file_info} (fuse_common.h): {@code flags}, then one 32-bit word of bit-fields
     * ({@code bits} here: {@code writepage} is bit 0, {@code direct_io} 1, {@code keep_cache} 2,
     * {@code flush} 3, {@code nonseekable} 4, {@code flock_release} 5, {@code cache_readdir} 6, {@code noflush} 7, as GCC
     * allocates bit-fields from the least significant bit on little-endian targets), 32 bits of padding,
     * {@code fh}, {@code lock_owner}, {@code poll_events}.
     */
    static final StructLayout FILE_INFO = MemoryLayout.structLayout(
            JAVA_INT.withName("flags"), JAVA_INT.withName("bits"), JAVA_INT.withName("padding2"),
            MemoryLayout.paddingLayout(4), JAVA_LONG.withName("fh"), JAVA_LONG.withName("lock_owner"),
            JAVA_INT.withName("poll_events"), MemoryLayout.paddingLayout(4));

    /** {@code struct fuse_conn_info} (fuse_common.h). */
    static final StructLayout CONN_INFO = MemoryLayout.structLayout(
            JAVA_INT.withName("proto_major"), JAVA_INT.withName("proto_minor"), JAVA_INT.withName("max_write"),
            JAVA_INT.withName("max_read"), JAVA_INT.withName("max_readahead"), JAVA_INT.withName("capable"),
            JAVA_INT.withName("want"), JAVA_INT.withName("max_background"),
            JAVA_INT.withName("congestion_threshold"), JAVA_INT.withName("time_gran"),
            MemoryLayout.sequenceLayout(22, JAVA_INT).withName("reserved"));

    /** {@code struct fuse_ctx} (fuse_lowlevel.h). */
    static final StructLayout CTX = MemoryLayout.structLayout(JAVA_INT.withName("uid"), JAVA_INT.withName("gid"),
            JAVA_INT.withName("pid"), JAVA_INT.withName("umask"));

    /** {@code struct fuse_forget_data} (fuse_lowlevel.h). */
    static final StructLayout FORGET_DATA = MemoryLayout.structLayout(JAVA_LONG.withName("ino"),
            JAVA_LONG.withName("nlookup"));

    /** {@code struct fuse_args} (fuse_opt.h). */
    static final StructLayout ARGS = MemoryLayout.structLayout(JAVA_INT.withName("argc"),
            MemoryLayout.paddingLayout(4), ADDRESS.withName("argv"), JAVA_INT.withName("allocated"),
            MemoryLayout.paddingLayout(4));

    /** {@code struct fuse_loop_config_v1} (fuse_common.h): what libfuse 3.2 to 3.11 take. */
    static final StructLayout LOOP_CONFIG_V1 = MemoryLayout.structLayout(JAVA_INT.withName("clone_fd"),
            JAVA_INT.withName("max_idle_threads"));

    /** {@code struct fuse_custom_io} (fuse_lowlevel.h, libfuse 3.14 and later). */
    static final StructLayout CUSTOM_IO = MemoryLayout.structLayout(ADDRESS.withName("writev"),
            ADDRESS.withName("read"), ADDRESS.withName("splice_receive"), ADDRESS.withName("splice_send"));

    /**
     * The slots of {@code struct fuse_lowlevel_ops} in libfuse 3.14's order (each a function pointer);
     * libfuse reads only the {@code op_size} bytes it is given, so a struct with these 44 slots suits
     * every libfuse 3 release from 3.8 (which added {@code lseek}) on.
     */
    static final String[] LOWLEVEL_SLOTS = {"init", "destroy", "lookup", "forget", "getattr", "setattr",
        "readlink", "mknod", "mkdir", "unlink", "rmdir", "symlink", "rename", "link", "open", "read", "write",
        "flush", "release", "fsync", "opendir", "readdir", "releasedir", "fsyncdir", "statfs", "setxattr",
        "getxattr", "listxattr", "removexattr", "access", "create", "getlk", "setlk", "bmap", "ioctl", "poll",
        "write_buf", "retrieve_reply", "forget_multi", "flock", "fallocate", "readdirplus", "copy_file_range",
        "lseek"};

    /** {@code struct fuse_lowlevel_ops}: {@link #LOWLEVEL_SLOTS}, one pointer each. */
    static final StructLayout LOWLEVEL_OPS = lowlevelOps();

    static final long STAT_INO = offset(STAT, "st_ino");
    static final long STAT_NLINK = offset(STAT, "st_nlink");
    static final long STAT_MODE = offset(STAT, "st_mode");
    static final long STAT_UID = offset(STAT, "st_uid");
    static final long STAT_GID = offset(STAT, "st_gid");
    static final long STAT_SIZE = offset(STAT, "st_size");
    static final long STAT_RDEV = offset(STAT, "st_rdev");
    static final long STAT_BLKSIZE = offset(STAT, "st_blksize");
    static final long STAT_BLOCKS = offset(STAT, "st_blocks");
    static final long STAT_ATIM = offset(STAT, "st_atim");
    static final long STAT_MTIM = offset(STAT, "st_mtim");
    static final long STAT_CTIM = offset(STAT, "st_ctim");
    static final long ENTRY_INO = offset(ENTRY_PARAM, "ino");
    static final long ENTRY_GENERATION = offset(ENTRY_PARAM, "generation");
    static final long ENTRY_ATTR = offset(ENTRY_PARAM, "attr");
    static final long ENTRY_ATTR_TIMEOUT = offset(ENTRY_PARAM, "attr_timeout");
    static final long ENTRY_ENTRY_TIMEOUT = offset(ENTRY_PARAM, "entry_timeout");
    static final long FI_FLAGS = offset(FILE_INFO, "flags");
    static final long FI_BITS = offset(FILE_INFO, "bits");
    static final long FI_FH = offset(FILE_INFO, "fh");
    /** Bits of {@code fuse_file_info}'s bit-field word ({@link #FI_BITS}). */
    static final int FI_DIRECT_IO = 1 << 1;
    static final int FI_KEEP_CACHE = 1 << 2;
    static final int FI_CACHE_READDIR = 1 << 6;
    static final int FI_NOFLUSH = 1 << 7;

    private FuseStructs() {
    }

    /**
     * @param arch {@code os.arch}
     * @throws UnsupportedOperationException naming the architecture, unless it is {@link #AMD64} or
     *     {@link #AARCH64} (64-bit Linux, whose structs this class describes)
     */
    static void check(String arch) {
        if (!AMD64.equals(arch) && !AARCH64.equals(arch)) {
            throw new UnsupportedOperationException("the FUSE binding knows libfuse's and glibc's structs on"
                    + " Linux amd64 and aarch64 only, not on " + arch);
        }
    }

    /** @return the byte offset of {@code field} in {@code layout} */
    static long offset(StructLayout layout, String field) {
        return layout.byteOffset(groupElement(field));
    }

    private static StructLayout lowlevelOps() {
        MemoryLayout[] slots = new MemoryLayout[LOWLEVEL_SLOTS.length];
        for (int i = 0; i < slots.length; i++) {
            slots[i] = ADDRESS.withName(LOWLEVEL_SLOTS[i]);
        }
        return MemoryLayout.structLayout(slots);
    }

    /**
     * Fills a {@code struct stat}: inode number, mode (type and permission bits), link count, owner,
     * group, size, blocks in 512-byte units, a preferred I/O size, and the three times.
     *
     * @param stat {@link #STAT}-sized memory, zeroed by the caller where other fields matter
     * @param attributes what to fill in
     */
    static void fillStat(MemorySegment stat, Attributes attributes) {
        stat.set(JAVA_LONG, STAT_INO, attributes.ino());
        stat.set(JAVA_INT, STAT_MODE, attributes.mode());
        if (STAT == STAT_AMD64) {
            stat.set(JAVA_LONG, STAT_NLINK, attributes.linkCount());
            stat.set(JAVA_LONG, STAT_BLKSIZE, attributes.blockSize());
        } else {
            stat.set(JAVA_INT, STAT_NLINK, attributes.linkCount());
            stat.set(JAVA_INT, STAT_BLKSIZE, attributes.blockSize());
        }
        stat.set(JAVA_INT, STAT_UID, attributes.uid());
        stat.set(JAVA_INT, STAT_GID, attributes.gid());
        stat.set(JAVA_LONG, STAT_SIZE, attributes.size());
        stat.set(JAVA_LONG, STAT_RDEV, attributes.rdev());
        stat.set(JAVA_LONG, STAT_BLOCKS, Math.ceilDiv(Math.max(0, attributes.allocatedBytes()), 512));
        setTime(stat, STAT_ATIM, attributes.atime());
        setTime(stat, STAT_MTIM, attributes.mtime());
        setTime(stat, STAT_CTIM, attributes.ctime());
    }

    private static void setTime(MemorySegment stat, long offset, Instant time) {
        stat.set(JAVA_LONG, offset, time.getEpochSecond());
        stat.set(JAVA_LONG, offset + JAVA_LONG.byteSize(), time.getNano());
    }

    /**
     * @param stat a {@code struct stat}
     * @param offset one of its times
     * @return that time, clamped to the range of an {@link Instant} (years -1e9 to 1e9), as a kernel file
     *     system clamps a time to the range its format holds ({@code timestamp_truncate}): {@code touch -d
     *     'Dec 31 23:59:59 UTC 2147483647'} sets the latest time there is (xfstests generic/634, 635; it
     *     failed EIO)
     */
    static Instant time(MemorySegment stat, long offset) {
        long seconds = Math.clamp(stat.get(JAVA_LONG, offset), Instant.MIN.getEpochSecond(), Instant.MAX.getEpochSecond());
        long nanos = Math.clamp(stat.get(JAVA_LONG, offset + JAVA_LONG.byteSize()), 0L, 999_999_999L);
        return Instant.ofEpochSecond(seconds, nanos);
    }
}
