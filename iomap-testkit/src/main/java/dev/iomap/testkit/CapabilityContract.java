package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.DynamicTest.dynamicTest;

import dev.iomap.api.Capability;
import dev.iomap.api.FileFlag;
import dev.iomap.api.FsckOptions;
import dev.iomap.api.DirEntry;
import dev.iomap.api.FallocateMode;
import dev.iomap.api.IomapFile;
import dev.iomap.api.NotSupportedException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Capabilities are declared in one place ({@link dev.iomap.spi.FileSystemAdapter#capabilities()}),
 * the mount reports them with their implications, and every capability declared absent fails its
 * operation with {@link NotSupportedException} (a clear message, nothing half-done). A declared one
 * must not.
 */
public abstract class CapabilityContract extends AdapterContract {

    /**
     * One operation per capability, run against a file of 4 blocks named {@code /cap-CAPABILITY}.
     * (The dynamic tests of one factory share a mount, so every name is the capability's own.) With
     * {@link AdapterFixture#existingFiles()} the file is the fixture's existing one instead, on a
     * freshly formatted filesystem for each probe, and the clone probe's target is the other one.
     */
    @FunctionalInterface
    private interface Probe {
        void run(IomapFile file) throws IOException;
    }

    private Map<Capability, Probe> probes() {
        long block = blockSize();
        AdapterFixture.ExistingFiles existing = kit().existingFiles();
        return Map.of(
                Capability.DIRECTORIES, file -> fs.mkdir("/dir"),
                Capability.RENAME, file -> {
                    String from = existing == null ? "/cap-" + Capability.RENAME : existing.file();
                    fs.rename(from, from + "-renamed");
                    assertThat(fs.stat(from + "-renamed").ino()).as("inode under the new name").isEqualTo(file.ino());
                },
                Capability.FALLOCATE, file -> file.fallocate(FallocateMode.ALLOCATE, 0, block, true),
                Capability.PUNCH_HOLE, file -> file.fallocate(FallocateMode.PUNCH_HOLE, 0, block, true),
                Capability.ZERO_RANGE, file -> file.fallocate(FallocateMode.ZERO_RANGE, 0, block, true),
                Capability.COPY_ON_WRITE, file -> file.unshare(0, block),
                Capability.CLONE, file -> {
                    if (existing != null) {
                        open(existing.other()).cloneRange(file, 0, 0, block);
                        return;
                    }
                    try (IomapFile target = fs.create("/clone-target")) {
                        target.cloneRange(file, 0, 0, block);
                    }
                },
                Capability.TRUNCATE, file -> {
                    long size = truncateSize();
                    file.truncate(size);
                    assertThat(file.size()).as("size after truncate").isEqualTo(size);
                },
                Capability.RANDOM_WRITE, file -> file.write(0, TestData.buffer(9, 0, 10)),
                Capability.JOURNALED_DATA, file -> {
                    String path = existing == null ? "/cap-" + Capability.JOURNALED_DATA : existing.file();
                    fs.setFileFlags(path, Set.of(FileFlag.JOURNAL_DATA));
                    assertThat(fs.getFileFlags(path)).as("flags after chattr +j").containsExactly(FileFlag.JOURNAL_DATA);
                    fs.setFileFlags(path, Set.of());
                    assertThat(fs.getFileFlags(path)).as("flags after chattr -j").isEmpty();
                });
    }

    private long truncateSize() {
        AdapterFixture.ExistingFiles existing = kit().existingFiles();
        return existing == null || existing.truncateSize() < 0 ? blockSize() : existing.truncateSize();
    }

    /** @return the probe's file: a new {@code /cap-CAPABILITY}, or the existing file on a fresh filesystem */
    private IomapFile probeFile(Capability capability) throws IOException {
        AdapterFixture.ExistingFiles existing = kit().existingFiles();
        if (existing == null) {
            return create("/cap-" + capability);
        }
        reformat();
        return open(existing.file());
    }

    /** @return whether the probe of a declared capability is expected to be refused on the probe's file */
    private boolean refusedHere(Capability capability) {
        AdapterFixture.ExistingFiles existing = kit().existingFiles();
        return existing != null && existing.refusedHere().contains(capability);
    }

    @Test
    void aScrubIsRefusedWithoutDataChecksumsAndCleanOnAHealthyImageWithThem() throws IOException {
        if (!kit().has(Capability.DATA_CHECKSUMS)) {
            // Refused before the image is read, so asking while it is mounted changes nothing.
            assertThatThrownBy(() -> kit().fsck(device, FsckOptions.SCRUB))
                    .isInstanceOf(NotSupportedException.class)
                    .hasMessageContaining("checksum");
            return;
        }
        byte[] model;
        try (IomapFile file = create("/scrubbed")) {
            model = writePattern(file, 0, 4 * blockSize(), 3);
            file.fsync();
        }
        remountChecked(FsckOptions.SCRUB);
        assertBytes(read(open("/scrubbed"), 0, model.length), model, 0);
    }

    @Test
    void theMountReportsTheDeclaredCapabilitiesWithTheirImplications() {
        assertThat(fs.capabilities()).isEqualTo(Capability.withImplied(kit().adapter().capabilities()));
        if (fs.capabilities().contains(Capability.CLONE)) {
            assertThat(fs.capabilities()).contains(Capability.COPY_ON_WRITE);
        }
    }

    @TestFactory
    Stream<DynamicTest> everyCapabilityDeclaredAbsentFailsWithNotSupported() {
        List<DynamicTest> tests = new ArrayList<>();
        for (Map.Entry<Capability, Probe> probe : probes().entrySet()) {
            Capability capability = probe.getKey();
            if (kit().has(capability)) {
                continue;
            }
            tests.add(dynamicTest(capability + " is absent: its operation is refused", () -> {
                IomapFile file = probeFile(capability);
                byte[] model = writePattern(file, 0, 4 * blockSize(), 1);
                long size = file.size();
                AdapterFixture.ExistingFiles existing = kit().existingFiles();
                IomapFile other = existing == null ? null : open(existing.other());
                long otherSize = other == null ? 0 : other.size();
                byte[] otherHead = other == null ? null : read(other, 0, blockSize());
                assertThatThrownBy(() -> probe.getValue().run(file))
                        .isInstanceOf(NotSupportedException.class)
                        .satisfies(e -> assertThat(e.getMessage()).as("message of the refusal")
                                .isNotBlank()
                                .containsAnyOf(capability.name(), capability.name().toLowerCase(Locale.ROOT).replace('_', ' ')));
                assertThat(file.size()).as("size after the refusal").isEqualTo(size);
                assertBytes(read(file, 0, model.length), model, 0);
                // Nothing half-done: no directory appeared, the file is as it was (the CLONE probe's
                // target is created before the clone is refused, and stays empty; an existing target
                // is as it was).
                assertThat(fs.readdir("/")).extracting(DirEntry::name).doesNotContain("dir");
                if (other != null) {
                    assertThat(other.size()).as("size of the clone target").isEqualTo(otherSize);
                    assertBytes(read(other, 0, blockSize()), otherHead, 0);
                } else if (capability == Capability.CLONE) {
                    assertThat(fs.stat("/clone-target").size()).isZero();
                }
            }));
        }
        if (tests.isEmpty()) {
            tests.add(dynamicTest("every capability is declared", () -> { }));
        }
        return tests.stream();
    }

    @TestFactory
    Stream<DynamicTest> everyCapabilityDeclaredPresentWorks() {
        List<DynamicTest> tests = new ArrayList<>();
        for (Map.Entry<Capability, Probe> probe : probes().entrySet()) {
            Capability capability = probe.getKey();
            if (!kit().has(capability)) {
                continue;
            }
            if (refusedHere(capability)) {
                tests.add(dynamicTest(capability + " is declared but this file refuses it", () -> {
                    IomapFile file = probeFile(capability);
                    byte[] model = writePattern(file, 0, 4 * blockSize(), 1);
                    long size = file.size();
                    assertThatThrownBy(() -> probe.getValue().run(file)).isInstanceOf(NotSupportedException.class);
                    assertThat(file.size()).as("size after the refusal").isEqualTo(size);
                    assertBytes(read(file, 0, model.length), model, 0);
                }));
                continue;
            }
            tests.add(dynamicTest(capability + " is declared: its operation works", () -> {
                IomapFile file = probeFile(capability);
                writePattern(file, 0, 4 * blockSize(), 1);
                probe.getValue().run(file);
            }));
        }
        if (tests.isEmpty()) {
            tests.add(dynamicTest("no capability is declared", () -> { }));
        }
        return tests.stream();
    }

    @Test
    void withoutDurableFsyncTheCrashSuiteIsSkippedNotFailed() {
        // DURABLE_FSYNC has no operation to refuse: fsync still works, it just promises nothing across
        // a power cut. CrashContract checks the promise only when it is declared.
        if (!kit().has(Capability.DURABLE_FSYNC)) {
            assertThat(fs.capabilities()).doesNotContain(Capability.DURABLE_FSYNC);
        }
    }
}
