package dev.iomap.testkit.fsx;

import dev.iomap.api.Capability;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.FileExtent;
import dev.iomap.api.FsckReport;
import dev.iomap.api.IomapFile;
import dev.iomap.api.OpenFlag;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NoDataException;
import dev.iomap.api.NotSupportedException;
import dev.iomap.testkit.AdapterFixture;
import dev.iomap.testkit.TestData;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;

/** One model-checker run: the mount, the file, the model, the history, and the checks after each op. */
final class FsxSession implements AutoCloseable {
    /** How often the mapping check asks again when background writeback changed the layout meanwhile. */
    private static final int MAPPING_CHECK_ATTEMPTS = 3;
    private final AdapterFixture fixture;
    private final int fullCheckEvery;
    private final Path logDir;
    private final List<String> header;
    private final String logName;
    private final FsxFile target;
    private final RamBlockDevice device;
    private final FileModel model = new FileModel();
    private final List<Op> ops = new ArrayList<>();
    private final List<long[]> touched = new ArrayList<>();
    private final boolean dense;
    private IomapFileSystem fs;
    private IomapFile file;
    /** Whether the file reports its extents; false once {@code fiemap} was refused (no mapping checks). */
    private boolean reportsExtents = true;

    FsxSession(AdapterFixture fixture, int fullCheckEvery, Path logDir, List<String> header, String logName,
            FsxFile target) throws IOException {
        this.fixture = fixture;
        this.fullCheckEvery = fullCheckEvery;
        this.logDir = logDir;
        this.header = header;
        this.logName = logName;
        this.target = target;
        this.dense = fixture.has(Capability.DENSE_FILES);
        this.device = fixture.newFormattedDevice();
        this.fs = fixture.mount(device);
        this.file = target.create() ? fs.create(target.path()) : fs.open(target.path());
        if (!target.create()) {
            long size = file.size();
            ByteBuffer contents = ByteBuffer.allocate(Math.toIntExact(size));
            while (contents.hasRemaining() && file.read(contents.position(), contents) > 0) {
                // read the whole file: the model starts from it
            }
            model.load(contents.array());
        }
    }

    /** @return the mounted filesystem's largest file size */
    long fileSizeLimit() {
        return fs.maxFileSize();
    }

    long modelSize() {
        return model.size();
    }

    List<Op> ops() {
        return ops;
    }

    /** Runs one op, applies it to the model, and checks size, EOF page tail and, now and then, everything. */
    void execute(Op op) {
        long sizeBefore = model.size();
        ops.add(op);
        touched.add(op.touches(sizeBefore));
        try {
            apply(op);
        } catch (IOException | RuntimeException e) {
            throw failure("op threw " + e, e);
        }
        try {
            checkSize();
            checkEofTail();
            if (ops.size() % fullCheckEvery == 0) {
                checkAll();
            }
        } catch (IOException | RuntimeException e) {
            throw failure("a check read threw " + e, e);
        }
    }

    /** The final checks: whole file, remount (with fsck), whole file again. */
    void finish() {
        execute(new Op.Check());
        execute(new Op.Remount());
        execute(new Op.Check());
    }

    private void apply(Op op) throws IOException {
        switch (op) {
            case Op.Read(long offset, int length) -> checkRead(offset, length);
            case Op.MapRead(long offset, int length) -> checkMapRead(offset, length);
            case Op.DirectRead(long offset, int length) -> checkDirectRead(offset, length);
            case Op.DirectWrite(long offset, int length, long fill) -> {
                byte[] data = TestData.pattern(fill, offset, length);
                try (IomapFile direct = fs.open(target.path(), EnumSet.of(OpenFlag.DIRECT))) {
                    int n = direct.write(offset, ByteBuffer.wrap(data));
                    if (n != length) {
                        throw failure("direct write returned " + n + ", expected " + length, null);
                    }
                }
                model.write(offset, data);
            }
            case Op.SeekData(long offset) -> checkSeekData(offset);
            case Op.SeekHole(long offset) -> checkSeekHole(offset);
            case Op.Write(long offset, int length, long fill) -> {
                byte[] data = TestData.pattern(fill, offset, length);
                int n = file.write(offset, ByteBuffer.wrap(data));
                if (n != length) {
                    throw failure("write returned " + n + ", expected " + length, null);
                }
                model.write(offset, data);
            }
            case Op.MapWrite(long offset, int length, long fill) -> {
                byte[] data = TestData.pattern(fill, offset, length);
                file.map().store(offset, ByteBuffer.wrap(data));
                model.write(offset, data);
            }
            case Op.Truncate(long size) -> {
                file.truncate(size);
                model.truncate(size);
            }
            case Op.Fallocate(long offset, long length, boolean keepSize) -> {
                file.fallocate(FallocateMode.ALLOCATE, offset, length, keepSize);
                extendIfNotKept(offset + length, keepSize);
            }
            case Op.PunchHole(long offset, long length) -> {
                file.fallocate(FallocateMode.PUNCH_HOLE, offset, length, true);
                model.zero(offset, length);
                model.forgetData(offset, length);
            }
            case Op.ZeroRange(long offset, long length, boolean keepSize) -> {
                file.fallocate(FallocateMode.ZERO_RANGE, offset, length, keepSize);
                model.zero(offset, length);
                model.forgetData(offset, length);
                extendIfNotKept(offset + length, keepSize);
            }
            case Op.Clone(long source, long target, long length) -> {
                file.cloneRange(file, source, target, length);
                model.clone(source, target, (int) length);
            }
            case Op.Copy(long source, long target, int length) -> {
                byte[] data = checkRead(source, length);
                int n = file.write(target, ByteBuffer.wrap(data));
                if (n != data.length) {
                    throw failure("copy wrote " + n + " of " + data.length, null);
                }
                model.write(target, data);
            }
            case Op.Fsync() -> file.fsync();
            case Op.Fdatasync() -> file.fdatasync();
            case Op.Sync() -> fs.sync();
            case Op.DropCache() -> fs.dropCleanCache();
            case Op.Remount() -> remount();
            case Op.Check() -> checkAll();
        }
    }

    private void extendIfNotKept(long end, boolean keepSize) {
        if (!keepSize && end > model.size()) {
            model.truncate(end);
        }
    }

    private void remount() throws IOException {
        file.close();
        fs.close();
        FsckReport report = fixture.fsck(device);
        if (!report.isClean()) {
            throw failure("fsck after unmount found problems (" + report.checked() + "):\n    "
                    + String.join("\n    ", report.problems()), null);
        }
        fs = fixture.mount(device);
        file = fs.open(target.path());
    }

    private byte[] checkRead(long offset, int length) throws IOException {
        ByteBuffer dst = ByteBuffer.allocate(length);
        while (dst.hasRemaining()) {
            int n = file.read(offset + dst.position(), dst);
            if (n <= 0) {
                break;
            }
        }
        byte[] actual = Arrays.copyOf(dst.array(), dst.position());
        compare("read " + offset + " " + length, offset, model.read(offset, length), actual);
        return actual;
    }

    /** A direct read: one call, the bytes up to EOF compared, -1 at or past EOF. */
    private void checkDirectRead(long offset, int length) throws IOException {
        ByteBuffer dst = ByteBuffer.allocate(length);
        int n;
        try (IomapFile direct = fs.open(target.path(), EnumSet.of(OpenFlag.DIRECT))) {
            n = direct.read(offset, dst);
        }
        long size = model.size();
        int expected = offset >= size ? -1 : (int) Math.min(length, size - offset);
        String what = "dread " + offset + " " + length + " (size " + size + ")";
        if (n != expected || dst.position() != Math.max(0, expected)) {
            throw failure(what + ": returned " + n + " with the buffer at " + dst.position() + ", expected "
                    + expected, null);
        }
        if (n > 0) {
            compare(what, offset, model.read(offset, n), Arrays.copyOf(dst.array(), n));
        }
    }

    private void checkMapRead(long offset, int length) throws IOException {
        ByteBuffer dst = ByteBuffer.allocate(length);
        file.map().load(offset, dst);
        compare("mapread " + offset + " " + length, offset, model.bytes(offset, length), dst.array());
    }

    /**
     * Seek data may report a hole as data (lseek allows it; a filesystem may allocate more than was
     * written) but never skip data: it lands at or after the offset, below EOF, and no later than the
     * first block the model knows holds data (exactly on the offset if its block does). At or past
     * EOF, and where the model knows no data, it may find nothing.
     */
    private void checkSeekData(long offset) throws IOException {
        long size = model.size();
        long actual = seek(true, offset);
        String what = "seekdata " + offset + " (size " + size + ")";
        if (offset >= size) {
            if (actual >= 0) {
                throw failure(what + ": found data at " + actual + ", expected ENXIO at or past EOF", null);
            }
            return;
        }
        long known = model.nextData(offset, blockSize());
        if (actual < 0 && known >= 0) {
            throw failure(what + ": ENXIO, but the block at " + known + " holds data" + writtenBy(known), null);
        }
        if (actual >= 0 && (actual < offset || actual >= size || (known >= 0 && actual > known))) {
            throw failure(what + ": found data at " + actual + ", expected in [" + offset + ", "
                    + (known >= 0 ? known : size - 1) + "]" + (known >= 0 ? writtenBy(known) : ""), null);
        }
        if (dense && actual != offset) {
            throw failure(what + ": " + (actual < 0 ? "ENXIO" : "found data at " + actual) + ", expected " + offset
                    + " (DENSE_FILES: every offset below EOF is data)", null);
        }
    }

    /**
     * Seek hole may report data as a hole's start no earlier than the data ends: it lands at or after
     * the offset, at most at EOF, never inside a block the model knows holds data (so exactly at EOF
     * where data runs to EOF). At or past EOF it finds nothing. With {@link Capability#DENSE_FILES} both
     * seeks are exact: seek data lands on the offset, seek hole on EOF.
     */
    private void checkSeekHole(long offset) throws IOException {
        long size = model.size();
        long actual = seek(false, offset);
        String what = "seekhole " + offset + " (size " + size + ")";
        if (offset >= size) {
            if (actual >= 0) {
                throw failure(what + ": found a hole at " + actual + ", expected ENXIO at or past EOF", null);
            }
            return;
        }
        if (actual < offset || actual > size) {
            throw failure(what + ": " + (actual < 0 ? "ENXIO" : "found a hole at " + actual) + ", expected in ["
                    + offset + ", " + size + "]", null);
        }
        if (actual < size && model.isDataBlock(actual, blockSize())) {
            throw failure(what + ": found a hole at " + actual + ", inside a block that holds data"
                    + writtenBy(actual), null);
        }
        if (dense && actual != size) {
            throw failure(what + ": found a hole at " + actual + ", expected EOF " + size
                    + " (DENSE_FILES: no holes below EOF)" + writtenBy(actual), null);
        }
    }

    /** @return the answer of seek data or seek hole, or -1 for ENXIO */
    private long seek(boolean data, long offset) throws IOException {
        try {
            return data ? file.seekData(offset) : file.seekHole(offset);
        } catch (NoDataException e) {
            return -1;
        }
    }

    private int blockSize() {
        return fixture.geometry().blockSize();
    }

    /** @return the last ops that wrote into the block holding {@code pos} */
    private String writtenBy(long pos) {
        long start = pos / blockSize() * blockSize();
        List<String> lines = new ArrayList<>();
        for (int i = ops.size() - 1; i >= 0 && lines.size() < 4; i--) {
            long[] range = touched.get(i);
            if (range[0] < start + blockSize() && start < range[1]) {
                lines.add("#" + i + " " + ops.get(i).toLine());
            }
        }
        return " (block " + start + ".." + (start + blockSize()) + "; last ops touching it: "
                + (lines.isEmpty() ? "none" : String.join(", ", lines)) + ")";
    }

    private void checkSize() {
        long actual = file.size();
        if (actual != model.size()) {
            throw failure("size: expected " + model.size() + ", actual " + actual, null);
        }
    }

    /** The bytes past EOF in the last page read as zero through the mapping. */
    private void checkEofTail() throws IOException {
        long size = model.size();
        int page = fixture.geometry().pageSize();
        int tail = (int) ((page - size % page) % page);
        if (tail == 0) {
            return;
        }
        ByteBuffer dst = ByteBuffer.allocate(tail);
        file.map().load(size, dst);
        compare("bytes past EOF in the last page", size, new byte[tail], dst.array());
    }

    private void checkAll() throws IOException {
        long size = model.size();
        long chunk = 1 << 20;
        for (long offset = 0; offset < size; offset += chunk) {
            checkRead(offset, (int) Math.min(chunk, size - offset));
        }
        checkMappings();
    }

    /**
     * No mapping claims a run longer than the blocks contiguous on the device: the extent report of the
     * whole file and the report of each block alone put every block at the same device address. A run
     * wrongly extended over blocks that are not contiguous puts the blocks after its first at the run's
     * address plus their distance, the report starting at such a block puts it where it is; reads and
     * writes that go through the two mappings meet only where a folio spans several blocks, so this
     * check, which needs neither, holds the adapter to it on every geometry. Blocks the report does not
     * place (delayed allocation, inline data) are skipped, and so is a report of one block that names
     * the start of the extent it lies in (an extent the adapter maps only whole, e.g. checksummed as
     * one). With {@link Capability#DENSE_FILES} every block below EOF must be covered. Asks without
     * sync, so the check writes nothing; a file that cannot report its extents is not checked. The
     * whole file's report is asked again after the blocks': if background writeback moved blocks
     * meanwhile (copy on write, under memory pressure), the check is run again, at most
     * {@value #MAPPING_CHECK_ATTEMPTS} times, and skipped if the layout never holds still.
     */
    private void checkMappings() throws IOException {
        long size = model.size();
        if (!reportsExtents || size == 0) {
            return;
        }
        for (int attempt = 0; attempt < MAPPING_CHECK_ATTEMPTS; attempt++) {
            List<FileExtent> whole;
            try {
                whole = file.fiemap(0, Long.MAX_VALUE, false);
            } catch (NotSupportedException e) {
                reportsExtents = false;
                return;
            }
            String problem = mappingProblem(whole, size);
            if (whole.equals(file.fiemap(0, Long.MAX_VALUE, false))) {
                if (problem != null) {
                    throw failure(problem, null);
                }
                return;
            }
            // Background writeback moved blocks meanwhile (copy on write): the reports are of two
            // layouts, so ask again.
        }
    }

    /** @return what is wrong with the file's mappings as {@code whole} reports them, or null */
    private String mappingProblem(List<FileExtent> whole, long size) throws IOException {
        int block = blockSize();
        int next = 0;
        for (long pos = 0; pos < size; pos += block) {
            while (next < whole.size() && whole.get(next).end() <= pos) {
                next++;
            }
            FileExtent run = next < whole.size() && whole.get(next).logical() <= pos ? whole.get(next) : null;
            if (run == null) {
                if (dense) {
                    return "fiemap: no extent covers the block at " + pos + " (DENSE_FILES: every block below EOF"
                            + " is allocated); report " + whole + writtenBy(pos);
                }
                continue;
            }
            if (!placed(run)) {
                continue;
            }
            List<FileExtent> alone = file.fiemap(pos, block, false);
            FileExtent own = covering(alone, pos);
            if (own == null) {
                return "fiemap: the report of the whole file maps the block at " + pos + " (" + run
                        + "), the report of that block alone does not (" + alone + ")" + writtenBy(pos);
            }
            long claimed = run.physical() + (pos - run.logical());
            long actual = own.physical() + (pos - own.logical());
            if (placed(own) && actual != claimed && own.physical() != run.physical()) {
                return "fiemap: a mapping claims a run longer than the blocks contiguous on the device: the"
                        + " report of the whole file puts the block at " + pos + " at device byte " + claimed
                        + " (" + run + "), the report of that block alone at " + actual + " (" + own + ")"
                        + writtenBy(pos);
            }
        }
        return null;
    }

    /** @return the extent of {@code extents} that holds {@code pos}, or null */
    private static FileExtent covering(List<FileExtent> extents, long pos) {
        for (FileExtent extent : extents) {
            if (extent.logical() <= pos && extent.end() > pos) {
                return extent;
            }
        }
        return null;
    }

    /** @return whether the extent gives its blocks' device addresses (not delayed, not inline) */
    private static boolean placed(FileExtent extent) {
        return !extent.has(FileExtent.Flag.DELALLOC) && !extent.has(FileExtent.Flag.UNKNOWN)
                && !extent.has(FileExtent.Flag.DATA_INLINE);
    }

    private void compare(String what, long offset, byte[] expected, byte[] actual) {
        if (Arrays.equals(expected, actual)) {
            return;
        }
        throw failure(new Mismatch(what, offset, expected, actual).describe(ops, touched), null);
    }

    private FsxFailure failure(String problem, Throwable cause) {
        Path log = logDir.resolve(fixture.label().replace('/', '-').replace('+', '-') + "-" + logName + ".fsxlog");
        String logLine;
        try {
            List<String> lines = new ArrayList<>(header);
            lines.add("failed after op #" + (ops.size() - 1) + ": " + problem.lines().findFirst().orElse(""));
            OpLog.write(log, lines, ops);
            logLine = "op log (" + ops.size() + " ops, one per line): " + log.toAbsolutePath();
        } catch (IOException e) {
            logLine = "op log could not be written: " + e;
            log = null;
        }
        String report = "fsx on " + fixture.label() + ": mismatch after op #" + (ops.size() - 1) + " ("
                + (ops.isEmpty() ? "none" : ops.getLast().toLine()) + ")\n  " + header.get(1) + "\n  "
                + problem.replace("\n", "\n  ") + "\n  " + pendingWritebackError() + "\n  " + Mismatch.recent(ops)
                + "  " + logLine;
        return new FsxFailure(report, log, ops.size() - 1, cause);
    }

    /**
     * Lost data often has a writeback error behind it that nobody has asked for yet: an fsync after
     * the mismatch reports it.
     */
    private String pendingWritebackError() {
        try {
            file.fsync();
            return "fsync after the mismatch: no writeback error pending";
        } catch (IOException | RuntimeException e) {
            Throwable root = e;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            StackTraceElement[] where = root.getStackTrace();
            return "fsync after the mismatch reports " + e + (root == e ? "" : "; root cause " + root
                    + (where.length > 0 ? " at " + where[0] + (where.length > 1 ? " < " + where[1] : "") : ""));
        }
    }

    @Override
    public void close() {
        try {
            file.close();
            fs.close();
        } catch (IOException | RuntimeException ignored) {
            // A failed run already reported its problem; closing is best effort.
        }
    }
}
