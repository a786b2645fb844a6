package dev.iomap.testkit.fsx;

import java.util.Locale;

/**
 * One model-checker operation, with its text form: one operation per line, a name and decimal
 * arguments separated by spaces ({@code write 4096 100 17}). {@link #parse} reads what
 * {@link #toLine} writes, so an op log replays exactly.
 *
 * <pre>
 * read OFFSET LENGTH              mapread OFFSET LENGTH
 * write OFFSET LENGTH FILL        mapwrite OFFSET LENGTH FILL
 * seekdata OFFSET                 seekhole OFFSET
 * truncate SIZE
 * fallocate OFFSET LENGTH keep|extend
 * punch OFFSET LENGTH             zero OFFSET LENGTH keep|extend
 * clone SRC DST LENGTH            copy SRC DST LENGTH
 * dread OFFSET LENGTH             dwrite OFFSET LENGTH FILL    (direct I/O: block aligned)
 * fsync  fdatasync  sync  dropcache  remount  check
 * </pre>
 *
 * <p>Written data is {@code TestData.pattern(FILL, offset, length)}: the log holds no data bytes.
 */
public sealed interface Op {

    /** @return the line that {@link #parse} turns back into this op */
    String toLine();

    /**
     * The byte range of the file this op may change, for "last ops touching offset X" in a failure
     * report; an empty range for ops that change no bytes.
     *
     * @param sizeBefore the file size before the op
     * @return {@code {from, to}}
     */
    default long[] touches(long sizeBefore) {
        return new long[] {0, 0};
    }

    /**
     * Buffered read.
     * @param offset first byte
     * @param length bytes
     */
    record Read(long offset, int length) implements Op {
        @Override
        public String toLine() {
            return "read " + offset + " " + length;
        }
    }

    /**
     * Direct read ({@code O_DIRECT}): offset and length block aligned; the bytes up to EOF are checked.
     * @param offset first byte
     * @param length bytes
     */
    record DirectRead(long offset, int length) implements Op {
        @Override
        public String toLine() {
            return "dread " + offset + " " + length;
        }
    }

    /**
     * Direct write ({@code O_DIRECT}) of {@code TestData.pattern(fill, offset, length)}; offset and
     * length block aligned.
     * @param offset first byte
     * @param length bytes
     * @param fill the pattern's seed
     */
    record DirectWrite(long offset, int length, long fill) implements Op {
        @Override
        public String toLine() {
            return "dwrite " + offset + " " + length + " " + fill;
        }

        @Override
        public long[] touches(long sizeBefore) {
            return new long[] {offset, offset + length};
        }
    }

    /**
     * Load through the shared mapping (may reach past EOF inside the last page).
     * @param offset first byte
     * @param length bytes
     */
    record MapRead(long offset, int length) implements Op {
        @Override
        public String toLine() {
            return "mapread " + offset + " " + length;
        }
    }

    /**
     * Seek data ({@code lseek SEEK_DATA}), checked against where the model knows data is.
     * @param offset where to seek from
     */
    record SeekData(long offset) implements Op {
        @Override
        public String toLine() {
            return "seekdata " + offset;
        }
    }

    /**
     * Seek hole ({@code lseek SEEK_HOLE}), checked against where the model knows data is.
     * @param offset where to seek from
     */
    record SeekHole(long offset) implements Op {
        @Override
        public String toLine() {
            return "seekhole " + offset;
        }
    }

    /**
     * Buffered write of a pattern.
     * @param offset first byte
     * @param length bytes
     * @param fill pattern seed
     */
    record Write(long offset, int length, long fill) implements Op {
        @Override
        public String toLine() {
            return "write " + offset + " " + length + " " + fill;
        }

        @Override
        public long[] touches(long sizeBefore) {
            return new long[] {Math.min(offset, sizeBefore), offset + length};
        }
    }

    /**
     * Store of a pattern through the shared mapping, inside EOF.
     * @param offset first byte
     * @param length bytes
     * @param fill pattern seed
     */
    record MapWrite(long offset, int length, long fill) implements Op {
        @Override
        public String toLine() {
            return "mapwrite " + offset + " " + length + " " + fill;
        }

        @Override
        public long[] touches(long sizeBefore) {
            return new long[] {offset, offset + length};
        }
    }

    /**
     * Truncate up or down.
     * @param size the new size
     */
    record Truncate(long size) implements Op {
        @Override
        public String toLine() {
            return "truncate " + size;
        }

        @Override
        public long[] touches(long sizeBefore) {
            return new long[] {Math.min(size, sizeBefore), Math.max(size, sizeBefore)};
        }
    }

    /**
     * Preallocate.
     * @param offset first byte
     * @param length bytes
     * @param keepSize whether the size stays
     */
    record Fallocate(long offset, long length, boolean keepSize) implements Op {
        @Override
        public String toLine() {
            return "fallocate " + offset + " " + length + (keepSize ? " keep" : " extend");
        }

        @Override
        public long[] touches(long sizeBefore) {
            return new long[] {offset, offset + length};
        }
    }

    /**
     * Punch a hole.
     * @param offset first byte
     * @param length bytes
     */
    record PunchHole(long offset, long length) implements Op {
        @Override
        public String toLine() {
            return "punch " + offset + " " + length;
        }

        @Override
        public long[] touches(long sizeBefore) {
            return new long[] {offset, offset + length};
        }
    }

    /**
     * Zero a range.
     * @param offset first byte
     * @param length bytes
     * @param keepSize whether the size stays
     */
    record ZeroRange(long offset, long length, boolean keepSize) implements Op {
        @Override
        public String toLine() {
            return "zero " + offset + " " + length + (keepSize ? " keep" : " extend");
        }

        @Override
        public long[] touches(long sizeBefore) {
            return new long[] {offset, offset + length};
        }
    }

    /**
     * Reflink within the file.
     * @param source first source byte
     * @param target first target byte
     * @param length bytes
     */
    record Clone(long source, long target, long length) implements Op {
        @Override
        public String toLine() {
            return "clone " + source + " " + target + " " + length;
        }

        @Override
        public long[] touches(long sizeBefore) {
            return new long[] {target, target + length};
        }
    }

    /**
     * Copy within the file by reading then writing (copy_file_range).
     * @param source first source byte
     * @param target first target byte
     * @param length bytes
     */
    record Copy(long source, long target, int length) implements Op {
        @Override
        public String toLine() {
            return "copy " + source + " " + target + " " + length;
        }

        @Override
        public long[] touches(long sizeBefore) {
            return new long[] {Math.min(target, sizeBefore), target + length};
        }
    }

    /** {@code fsync} of the file. */
    record Fsync() implements Op {
        @Override
        public String toLine() {
            return "fsync";
        }
    }

    /** {@code fdatasync} of the file. */
    record Fdatasync() implements Op {
        @Override
        public String toLine() {
            return "fdatasync";
        }
    }

    /** Forced writeback of the whole filesystem ({@code syncfs}). */
    record Sync() implements Op {
        @Override
        public String toLine() {
            return "sync";
        }
    }

    /** Drop every clean cached folio ({@code drop_caches}). */
    record DropCache() implements Op {
        @Override
        public String toLine() {
            return "dropcache";
        }
    }

    /** Unmount, fsck, mount again and reopen the file. */
    record Remount() implements Op {
        @Override
        public String toLine() {
            return "remount";
        }
    }

    /** Compare the whole file with the model. */
    record Check() implements Op {
        @Override
        public String toLine() {
            return "check";
        }
    }

    /**
     * @param line one line of an op log, without comments
     * @return the op
     * @throws IllegalArgumentException if the line is not an op
     */
    static Op parse(String line) {
        String[] f = line.trim().split("\\s+");
        try {
            return switch (f[0].toLowerCase(Locale.ROOT)) {
                case "read" -> new Read(num(f, 1), (int) num(f, 2));
                case "mapread" -> new MapRead(num(f, 1), (int) num(f, 2));
                case "dread" -> new DirectRead(num(f, 1), (int) num(f, 2));
                case "dwrite" -> new DirectWrite(num(f, 1), (int) num(f, 2), num(f, 3));
                case "seekdata" -> new SeekData(num(f, 1));
                case "seekhole" -> new SeekHole(num(f, 1));
                case "write" -> new Write(num(f, 1), (int) num(f, 2), num(f, 3));
                case "mapwrite" -> new MapWrite(num(f, 1), (int) num(f, 2), num(f, 3));
                case "truncate" -> new Truncate(num(f, 1));
                case "fallocate" -> new Fallocate(num(f, 1), num(f, 2), keep(f, 3));
                case "punch" -> new PunchHole(num(f, 1), num(f, 2));
                case "zero" -> new ZeroRange(num(f, 1), num(f, 2), keep(f, 3));
                case "clone" -> new Clone(num(f, 1), num(f, 2), num(f, 3));
                case "copy" -> new Copy(num(f, 1), num(f, 2), (int) num(f, 3));
                case "fsync" -> new Fsync();
                case "fdatasync" -> new Fdatasync();
                case "sync" -> new Sync();
                case "dropcache" -> new DropCache();
                case "remount" -> new Remount();
                case "check" -> new Check();
                default -> throw new IllegalArgumentException("unknown op '" + f[0] + "'");
            };
        } catch (ArrayIndexOutOfBoundsException | NumberFormatException e) {
            throw new IllegalArgumentException("bad op line '" + line + "': " + e.getMessage(), e);
        }
    }

    private static long num(String[] fields, int index) {
        return Long.parseLong(fields[index]);
    }

    private static boolean keep(String[] fields, int index) {
        return switch (fields[index]) {
            case "keep" -> true;
            case "extend" -> false;
            default -> throw new IllegalArgumentException("expected keep or extend, got " + fields[index]);
        };
    }
}
