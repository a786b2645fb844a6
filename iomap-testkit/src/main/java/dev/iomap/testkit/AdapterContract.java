package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.iomap.device.BlockDevice;
import dev.iomap.api.Capability;
import dev.iomap.api.FsckReport;
import dev.iomap.api.FsckOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The base of every contract suite: one factory method for the adapter under test, a freshly
 * formatted and mounted filesystem per test, and helpers that read and compare whole ranges.
 *
 * <p>Each test gets a new {@link RamBlockDevice} ({@link #device}), formatted and mounted as
 * {@link #fs}. After the test every file it opened through the helpers is closed, the filesystem is
 * unmounted, and the adapter's fsck must find the image clean: every test is also a test that
 * unmount leaves a consistent image. A test that breaks the device on purpose calls
 * {@link #skipFinalCheck()}.
 *
 * <p>Tests that need a capability the adapter does not declare are skipped (JUnit assumptions);
 * {@link CapabilityContract} proves the undeclared ones fail cleanly.
 */
@ExtendWith(FailureLabels.class)
public abstract class AdapterContract {
    /** The device of the current test: its contents survive {@link #remount()}. */
    protected RamBlockDevice device;
    /** The filesystem mounted on {@link #mountedOn} for the current test. */
    protected IomapFileSystem fs;
    private AdapterFixture fixture;
    private BlockDevice mountedOn;
    private final List<IomapFile> opened = new ArrayList<>();
    private boolean finalCheck = true;

    /**
     * The adapter under test. Called once per test; the only method a concrete suite implements.
     *
     * @return the fixture
     */
    protected abstract AdapterFixture fixture();

    /** @return the fixture of the current test (null before it started) */
    protected final AdapterFixture kit() {
        return fixture;
    }

    @BeforeEach
    final void formatAndMount(TestInfo test) throws IOException {
        fixture = fixture();
        String known = test.getTestMethod().map(method -> fixture.knownFailure(method.getName())).orElse(null);
        if (known != null) {
            Assumptions.abort("known failure of " + fixture.adapter().name() + ": " + known);
        }
        device = fixture.newFormattedDevice();
        mountedOn = device;
        fs = fixture.mount(device);
    }

    @AfterEach
    final void unmountAndCheck() throws IOException {
        if (fs == null) {
            return;
        }
        closeOpenedFiles();
        if (!finalCheck) {
            try {
                fs.close();
            } catch (IOException | RuntimeException ignored) {
                // The test broke the device on purpose; unmount may fail.
            }
            return;
        }
        fs.close();
        // An adapter with data checksums is scrubbed: every extent it wrote must verify.
        FsckReport report = fixture.fsck(device, fixture.has(Capability.DATA_CHECKSUMS)
                ? FsckOptions.SCRUB : FsckOptions.METADATA);
        assertThat(report.problems()).as("fsck after unmount (%s)", report.checked()).isEmpty();
    }

    /** The current test breaks the device on purpose: no unmount error or fsck check after it. */
    protected final void skipFinalCheck() {
        finalCheck = false;
    }

    /**
     * Unmounts (closing every file opened through the helpers) and mounts the same device again.
     *
     * @return the new mount, also in {@link #fs}
     * @throws IOException from unmount or mount
     */
    protected final IomapFileSystem remount() throws IOException {
        return remountOn(mountedOn);
    }

    /**
     * Unmounts and mounts again on {@code wrapper}, a device wrapping {@link #device} (counting or
     * fault-injecting); later {@link #remount()}s use it too.
     *
     * @param wrapper the device to mount on
     * @return the new mount, also in {@link #fs}
     * @throws IOException from unmount or mount
     */
    protected final IomapFileSystem remountOn(BlockDevice wrapper) throws IOException {
        closeOpenedFiles();
        fs.close();
        mountedOn = wrapper;
        fs = fixture.mount(wrapper);
        return fs;
    }

    /**
     * Unmounts, checks the image with fsck, and mounts again.
     *
     * @return the new mount
     * @throws IOException from unmount, fsck or mount
     */
    protected final IomapFileSystem remountChecked() throws IOException {
        return remountChecked(FsckOptions.METADATA);
    }

    /**
     * Unmounts, checks the image with fsck and the given options, and mounts again.
     *
     * @param options what fsck checks beyond the metadata
     * @return the new mount
     * @throws IOException from unmount, fsck or mount
     */
    protected final IomapFileSystem remountChecked(FsckOptions options) throws IOException {
        closeOpenedFiles();
        fs.close();
        FsckReport report = fixture.fsck(device, options);
        assertThat(report.problems()).as("fsck after unmount (%s)", report.checked()).isEmpty();
        fs = fixture.mount(mountedOn);
        return fs;
    }

    /**
     * Unmounts (closing every file opened through the helpers), checks the old image with fsck, and
     * formats and mounts a new device, for a test that needs a pristine filesystem again (the dynamic
     * tests of one factory share a mount).
     *
     * @return the new mount, also in {@link #fs}
     * @throws IOException from unmount, fsck, format or mount
     */
    protected final IomapFileSystem reformat() throws IOException {
        closeOpenedFiles();
        fs.close();
        FsckReport report = fixture.fsck(device);
        assertThat(report.problems()).as("fsck after unmount (%s)", report.checked()).isEmpty();
        device = fixture.newFormattedDevice();
        mountedOn = device;
        fs = fixture.mount(device);
        return fs;
    }

    private void closeOpenedFiles() throws IOException {
        for (IomapFile file : opened) {
            try {
                file.close();
            } catch (java.nio.file.ClosedFileSystemException ignored) {
                // Already gone with its filesystem.
            }
        }
        opened.clear();
    }

    /**
     * Skips the test unless the adapter has every capability given.
     *
     * @param capabilities what the test needs
     */
    protected final void assumeCapable(Capability... capabilities) {
        for (Capability capability : capabilities) {
            assumeTrue(fixture.has(capability), fixture.adapter().name() + " does not declare " + capability);
        }
    }

    /**
     * @param capability a capability
     * @return whether the adapter has it
     */
    protected final boolean has(Capability capability) {
        return fixture.has(capability);
    }

    /**
     * A size or offset a test would like, cut to what one file of the mounted filesystem may hold: tests
     * that span several of the largest folios ask for more than an adapter with a small file-size limit
     * (an ext2-like one with 1 KiB blocks holds 268 KiB) allows.
     *
     * @param bytes the size wanted
     * @return {@code bytes}, at most {@link IomapFileSystem#maxFileSize()}
     */
    protected final long withinFileLimit(long bytes) {
        return Math.min(bytes, fs.maxFileSize());
    }

    /** @return the filesystem block size */
    protected final int blockSize() {
        return fixture.geometry().blockSize();
    }

    /** @return the page size */
    protected final int pageSize() {
        return fixture.geometry().pageSize();
    }

    /** @return bytes in the largest folio */
    protected final long maxFolioSize() {
        return fixture.geometry().maxFolioSize();
    }

    /**
     * Creates a file; it is closed after the test (or at the next remount).
     *
     * @param path where
     * @return the open file
     * @throws IOException from create
     */
    protected final IomapFile create(String path) throws IOException {
        return track(fs.create(path));
    }

    /**
     * For the suites that run on a fixture's existing files too: a new file {@code /a}, or the
     * fixture's existing file (of a fresh filesystem); closed after the test like {@link #create}'s.
     *
     * @return the file
     * @throws IOException if it cannot be created or opened
     */
    protected final IomapFile createdOrExisting() throws IOException {
        AdapterFixture.ExistingFiles existing = kit().existingFiles();
        return existing == null ? create("/a") : open(existing.file());
    }

    /**
     * Opens a file; it is closed after the test (or at the next remount).
     *
     * @param path the file
     * @return the open file
     * @throws IOException from open
     */
    protected final IomapFile open(String path) throws IOException {
        return track(fs.open(path));
    }

    /**
     * Opens a file with open flags ({@link dev.iomap.api.OpenFlag}); it is closed after the test (or
     * at the next remount).
     *
     * @param path the file
     * @param flags how to open it
     * @return the open file
     * @throws IOException from open
     */
    protected final IomapFile open(String path, java.util.Set<dev.iomap.api.OpenFlag> flags) throws IOException {
        return track(fs.open(path, flags));
    }

    private IomapFile track(IomapFile file) {
        opened.add(file);
        return file;
    }

    /**
     * Writes all of {@code data} at {@code pos} and checks the count returned.
     *
     * @param file the file
     * @param pos file offset
     * @param data the bytes
     * @throws IOException from write
     */
    protected static void write(IomapFile file, long pos, byte[] data) throws IOException {
        ByteBuffer src = ByteBuffer.wrap(data);
        int written = file.write(pos, src);
        assertThat(written).as("bytes written at %d", pos).isEqualTo(data.length);
        assertThat(src.hasRemaining()).as("source buffer consumed").isFalse();
    }

    /**
     * Writes a {@link TestData} pattern and returns it.
     *
     * @param file the file
     * @param pos file offset
     * @param length bytes
     * @param seed the pattern's seed
     * @return the bytes written
     * @throws IOException from write
     */
    protected static byte[] writePattern(IomapFile file, long pos, int length, long seed) throws IOException {
        byte[] data = TestData.pattern(seed, pos, length);
        write(file, pos, data);
        return data;
    }

    /**
     * Reads up to {@code length} bytes at {@code pos}, looping over short reads, stopping at EOF.
     *
     * @param file the file
     * @param pos file offset
     * @param length bytes wanted
     * @return the bytes read (fewer at EOF)
     * @throws IOException from read
     */
    protected static byte[] read(IomapFile file, long pos, int length) throws IOException {
        ByteBuffer dst = ByteBuffer.allocate(length);
        while (dst.hasRemaining()) {
            int before = dst.position();
            int n = file.read(pos + before, dst);
            if (n < 0) {
                break;
            }
            assertThat(dst.position() - before).as("read's return value is the bytes it placed").isEqualTo(n);
            if (n == 0) {
                fail("read at %d returned 0 bytes before EOF (size %d)", pos + before, file.size());
            }
        }
        return Arrays.copyOf(dst.array(), dst.position());
    }

    /**
     * @param file the file
     * @return its whole contents
     * @throws IOException from read
     */
    protected static byte[] readAll(IomapFile file) throws IOException {
        return read(file, 0, Math.toIntExact(file.size()));
    }

    /**
     * Asserts the file's size and every byte.
     *
     * @param file the file
     * @param expected the whole expected contents
     * @throws IOException from read
     */
    protected static void assertContent(IomapFile file, byte[] expected) throws IOException {
        assertThat(file.size()).as("size of inode %d", file.ino()).isEqualTo(expected.length);
        assertBytes(read(file, 0, expected.length + 1), expected, 0);
    }

    /**
     * Asserts a range of bytes, naming the first difference.
     *
     * @param actual what was read
     * @param expected what should be there
     * @param fileOffset file offset of index 0
     */
    protected static void assertBytes(byte[] actual, byte[] expected, long fileOffset) {
        String difference = TestData.firstDifference(expected, actual, fileOffset);
        if (difference != null) {
            fail("file contents differ: " + difference);
        }
    }

    /**
     * @param array an array
     * @param length the new length
     * @return a copy cut or zero-extended to {@code length}
     */
    protected static byte[] resize(byte[] array, long length) {
        return Arrays.copyOf(array, Math.toIntExact(length));
    }

    /**
     * Copies {@code data} into {@code model} at {@code pos}, growing it if needed.
     *
     * @param model the expected contents
     * @param pos offset
     * @param data bytes
     * @return the model (a new array if it grew)
     */
    protected static byte[] apply(byte[] model, long pos, byte[] data) {
        byte[] out = model.length < pos + data.length ? resize(model, pos + data.length) : model;
        System.arraycopy(data, 0, out, (int) pos, data.length);
        return out;
    }

    /**
     * Makes every clean cached page go, so the next reads come from the device.
     *
     * @return bytes dropped
     */
    protected final long dropCache() {
        return fs.dropCleanCache();
    }
}
