package dev.iomap.cli.jobfile;

/** fio's {@code fallocate=}: how a file is preallocated when it is laid out. */
public enum Fallocate {
    /** Nothing. */
    NONE,
    /** Allocate (unwritten) if the adapter can, else nothing: fio's default on Linux. */
    NATIVE,
    /** Allocate (unwritten); treated as {@link #NATIVE}. */
    POSIX,
    /** Allocate past the size without changing it. */
    KEEP,
    /** Only set the size. */
    TRUNCATE
}
