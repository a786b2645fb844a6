package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.api.AtomicWriteException;
import dev.iomap.api.AtomicWriteLimits;
import dev.iomap.api.Capability;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.NotSupportedException;
import dev.iomap.api.OpenFlag;
import dev.iomap.testkit.crash.MetadataCuts;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Atomic writes ({@link IomapFile#writeAtomic}, Linux's {@code RWF_ATOMIC}): the limits {@code stat}
 * reports, every rule refused with the {@link AtomicWriteLimits.Rule} it breaks before anything is
 * written, writes that overwrite and extend, and a power cut at every device write of an atomic write and
 * the fdatasync after it leaving the range all old or all new (all new once fdatasync returned). Runs for
 * adapters declaring {@link Capability#ATOMIC_WRITES}; for the others, the test that atomic writes are
 * refused ({@link NotSupportedException}, the kernel's EOPNOTSUPP) and that files report
 * {@link AtomicWriteLimits#NONE}.
 *
 * <p>{@link #cutsAroundAnOverwrite} is the crash scenario for the adapter's own tests: run with a plain
 * direct write on an adapter that overwrites in place, some cut must show a mix, which proves the scenario
 * can see a torn write.
 */
public abstract class AtomicWriteContract extends AdapterContract {
    private static final Set<OpenFlag> DIRECT = EnumSet.of(OpenFlag.DIRECT);
    /**
     * The length of the crash scenario's write in blocks, if the limits allow it: 16 KiB at 1 KiB blocks, 64
     * KiB at 4 KiB; enough blocks that a write cache keeping some of them is all but sure to tear a write
     * that is not atomic.
     */
    private static final int CRASH_WRITE_BLOCKS = 16;

    /** @return the limits {@code stat} reports for {@code /a}, which the test created */
    private AtomicWriteLimits limits() throws IOException {
        return fs.stat("/a").atomicWrite();
    }

    private void assumeAtomic() {
        assumeCapable(Capability.ATOMIC_WRITES);
        assumeTrue(kit().existingFiles() == null, "needs files of its own; this fixture uses existing files");
    }

    /** An atomic write of {@code data} at {@code pos}, checking that all of it was taken. */
    private static void atomicWrite(IomapFile file, long pos, byte[] data) throws IOException {
        ByteBuffer src = ByteBuffer.wrap(data);
        assertThat(file.writeAtomic(pos, src)).as("atomic write at %d", pos).isEqualTo(data.length);
        assertThat(src.hasRemaining()).isFalse();
    }

    @Test
    void atomicWritesAreRefusedWithoutTheCapability() throws IOException {
        assumeTrue(!has(Capability.ATOMIC_WRITES), kit().adapter().name() + " declares ATOMIC_WRITES");
        AdapterFixture.ExistingFiles existing = kit().existingFiles();
        String path = existing == null ? "/a" : existing.file();
        if (existing == null) {
            create(path);
        }
        assertThat(fs.stat(path).atomicWrite()).isEqualTo(AtomicWriteLimits.NONE);
        IomapFile file = has(Capability.DIRECT_IO) ? open(path, DIRECT) : open(path);
        ByteBuffer src = ByteBuffer.wrap(new byte[blockSize()]);
        assertThatThrownBy(() -> file.writeAtomic(0, src)).isInstanceOf(NotSupportedException.class)
                .hasMessageContaining("ATOMIC_WRITES");
        assertThat(src.position()).isZero();
    }

    @Test
    void statReportsTheLimitsOfRegularFilesOnly() throws IOException {
        assumeAtomic();
        create("/a");
        AtomicWriteLimits limits = limits();
        assertThat(limits.supported()).isTrue();
        assertThat(limits.segmentsMax()).isEqualTo(1);
        assertThat(limits.unitMin() % blockSize()).as("unit min %d in blocks of %d", limits.unitMin(), blockSize())
                .isZero();
        assertThat(fs.stat("/").atomicWrite()).isEqualTo(AtomicWriteLimits.NONE);
    }

    @Test
    void aBufferedOpenIsRefused() throws IOException {
        assumeAtomic();
        IomapFile file = create("/a");
        ByteBuffer src = ByteBuffer.wrap(new byte[limits().unitMin()]);
        assertThatThrownBy(() -> file.writeAtomic(0, src)).isInstanceOf(NotSupportedException.class)
                .hasMessageContaining("direct I/O only");
        assertThat(file.size()).isZero();
    }

    /** Each rule broken in turn: the exception names it, nothing is written, the source is not consumed. */
    @Test
    void everyRuleIsCheckedBeforeAnythingIsWritten() throws IOException {
        assumeAtomic();
        IomapFile buffered = create("/a");
        AtomicWriteLimits limits = limits();
        int min = limits.unitMin();
        int max = limits.unitMax();
        byte[] before = writePattern(buffered, 0, 4 * max, 1);
        buffered.fsync();
        IomapFile file = open("/a", DIRECT);
        if (3L * min <= max) {
            expectRule(file, 0, 3 * min, AtomicWriteLimits.Rule.LENGTH_NOT_POWER_OF_TWO);
        }
        expectRule(file, 0, 2 * max, AtomicWriteLimits.Rule.LENGTH_ABOVE_UNIT_MAX);
        if (min > 1) {
            expectRule(file, 0, min / 2, AtomicWriteLimits.Rule.LENGTH_BELOW_UNIT_MIN);
        }
        if (max > min) {
            expectRule(file, min, 2 * min, AtomicWriteLimits.Rule.OFFSET_NOT_ALIGNED_TO_LENGTH);
        }
        assertContent(buffered, before);
    }

    private static void expectRule(IomapFile file, long pos, int length, AtomicWriteLimits.Rule rule) {
        ByteBuffer src = ByteBuffer.wrap(TestData.pattern(9, pos, length));
        assertThatThrownBy(() -> file.writeAtomic(pos, src)).as("atomic write of %d bytes at %d", length, pos)
                .isInstanceOfSatisfying(AtomicWriteException.class, e -> assertThat(e.rule()).isEqualTo(rule));
        assertThat(src.position()).isZero();
    }

    @Test
    void anAppendMustLandAligned() throws IOException {
        assumeAtomic();
        IomapFile buffered = create("/a");
        int min = limits().unitMin();
        byte[] before = writePattern(buffered, 0, min, 1);
        buffered.fsync();
        IomapFile file = open("/a", EnumSet.of(OpenFlag.DIRECT, OpenFlag.APPEND));
        expectRule(file, 0, 2 * min, AtomicWriteLimits.Rule.OFFSET_NOT_ALIGNED_TO_LENGTH);
        byte[] data = TestData.pattern(2, min, min);
        atomicWrite(file, 0, data);
        assertContent(buffered, concat(before, data));
    }

    @Test
    void atomicWritesOverwriteFillHolesAndExtendTheFile() throws IOException {
        assumeAtomic();
        IomapFile buffered = create("/a");
        AtomicWriteLimits limits = limits();
        int max = limits.unitMax();
        byte[] model = writePattern(buffered, 0, 2 * max, 1);
        buffered.fsync();
        IomapFile file = open("/a", DIRECT);
        byte[] over = TestData.pattern(2, max, max);
        atomicWrite(file, max, over);
        model = apply(model, max, over);
        byte[] past = TestData.pattern(3, 4L * max, limits.unitMin());
        atomicWrite(file, 4L * max, past);
        model = apply(model, 4L * max, past);
        assertThat(file.size()).isEqualTo(4L * max + limits.unitMin());
        assertContent(open("/a"), model);
        file.fdatasync();
        remountChecked();
        assertContent(open("/a"), model);
    }

    @Test
    void anAtomicWriteToClonedBlocksLeavesTheSourceAlone() throws IOException {
        assumeAtomic();
        assumeCapable(Capability.CLONE);
        IomapFile source = create("/a");
        int max = limits().unitMax();
        byte[] original = writePattern(source, 0, 2 * max, 1);
        source.fsync();
        IomapFile target = create("/b");
        target.cloneRange(source, 0, 0, 2L * max);
        byte[] data = TestData.pattern(2, max, max);
        atomicWrite(open("/b", DIRECT), max, data);
        assertContent(open("/b"), apply(original.clone(), max, data));
        assertContent(open("/a"), original);
        remountChecked();
        assertContent(open("/b"), apply(original.clone(), max, data));
        assertContent(open("/a"), original);
    }

    /**
     * An atomic write of 16 blocks over old data, cut at every device write of it and of the fdatasync after it, in
     * every {@link dev.iomap.devices.CutMode}, and once after fdatasync returned: every image mounts,
     * passes fsck, and shows the range all old or all new (all new after fdatasync), the rest of the file
     * untouched.
     */
    @Test
    void aPowerCutAtEveryDeviceWriteLeavesAllOldOrAllNew() throws IOException {
        assumeAtomic();
        assumeCapable(Capability.DURABLE_FSYNC);
        List<MetadataCuts.Image> images = cutsAroundAnOverwrite(true);
        for (MetadataCuts.Image image : images) {
            List<String> allowed = image.afterDurable() ? List.of("new") : List.of("old", "new");
            assertThat(image.state()).as("%s: %s", kit().label(), image.where()).isIn(allowed);
        }
        assertThat(images.stream().map(MetadataCuts.Image::state)).as("states seen").contains("old", "new");
    }

    /**
     * The crash scenario: a file of three write lengths of old data, synced; then a direct write
     * ({@link IomapFile#writeAtomic} if {@code atomic}, else {@link IomapFile#write}) of new data over the
     * middle one and an fdatasync, the power cut at every device write of both ({@link MetadataCuts#observe}).
     * The length is 16 blocks, within the file's atomic write limits if it has any.
     *
     * @param atomic whether the write is atomic
     * @return every image's state: {@code "old"}, {@code "new"}, or {@code "mixed: ..."} naming the blocks
     *     that are new; anything else outside the middle range or a wrong size is reported as damage
     * @throws IOException if a step fails before a cut, or an image does not mount
     */
    protected final List<MetadataCuts.Image> cutsAroundAnOverwrite(boolean atomic) throws IOException {
        create("/a");
        AtomicWriteLimits limits = limits();
        int blocks = CRASH_WRITE_BLOCKS * blockSize();
        int length = limits.supported() ? Math.min(Math.max(blocks, limits.unitMin()), limits.unitMax()) : blocks;
        byte[] old = TestData.pattern(1, 0, 3 * length);
        byte[] fresh = TestData.pattern(2, length, length);
        byte[] updated = apply(old.clone(), length, fresh);
        String path = "/c";
        MetadataCuts.Step setup = f -> {
            try (IomapFile file = f.create(path)) {
                write(file, 0, old);
            }
        };
        MetadataCuts.Step change = f -> {
            try (IomapFile file = f.open(path, DIRECT)) {
                ByteBuffer src = ByteBuffer.wrap(fresh);
                int written = atomic ? file.writeAtomic(length, src) : file.write(length, src);
                assertThat(written).isEqualTo(length);
            }
        };
        MetadataCuts.Step durable = f -> {
            try (IomapFile file = f.open(path)) {
                file.fdatasync();
            }
        };
        String what = (atomic ? "atomic" : "plain") + " direct write of " + length + " bytes";
        return MetadataCuts.observe(kit(), what, setup, change, durable, f -> state(f, path, old, updated, length),
                Integer.MAX_VALUE);
    }

    private static String state(IomapFileSystem recovered, String path, byte[] old, byte[] updated, int length)
            throws IOException {
        byte[] content;
        try (IomapFile file = recovered.open(path)) {
            content = readAll(file);
        }
        if (Arrays.equals(content, old)) {
            return "old";
        }
        if (Arrays.equals(content, updated)) {
            return "new";
        }
        if (content.length != old.length || !Arrays.equals(content, 0, length, old, 0, length)
                || !Arrays.equals(content, 2 * length, 3 * length, old, 2 * length, 3 * length)) {
            return "damaged: " + content.length + " bytes, outside the written range changed";
        }
        StringBuilder fresh = new StringBuilder();
        int block = 512;
        for (int at = length; at < 2 * length; at += block) {
            if (Arrays.equals(content, at, at + block, updated, at, at + block)) {
                fresh.append(' ').append(at);
            } else if (!Arrays.equals(content, at, at + block, old, at, at + block)) {
                return "damaged: the 512 bytes at " + at + " are neither old nor new";
            }
        }
        return "mixed: new 512-byte sectors at" + fresh;
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] all = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, all, a.length, b.length);
        return all;
    }
}
