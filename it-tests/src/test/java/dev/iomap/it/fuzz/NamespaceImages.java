package dev.iomap.it.fuzz;

import dev.iomap.api.FallocateMode;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.testkit.TestData;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The content of the images of adapters with a namespace (xfs-like, snapfs), and their workload.
 *
 * <p>Files of many sizes (0, 1, block − 1, block, block + 1, several blocks, tens of blocks), nested
 * directories, a directory of many long names (several directory blocks), a sparse file, a file with
 * fallocated (unwritten) ranges inside and past EOF and a punched hole, a file fragmented into more
 * extents than an inode holds inline, and, where the adapter clones, a reflinked copy of a file with
 * one block since rewritten (copy-on-write). The workload's files live under {@code /w}.
 */
final class NamespaceImages {

    private NamespaceImages() {
    }

    static void populate(IomapFileSystem fs, int blockSize, boolean clones) throws IOException {
        FuzzTarget.file(fs, "/empty", 0);
        FuzzTarget.file(fs, "/one", 1);
        FuzzTarget.file(fs, "/block-1", blockSize - 1);
        FuzzTarget.file(fs, "/block", blockSize);
        FuzzTarget.file(fs, "/block+1", blockSize + 1);
        fs.mkdir("/d1");
        fs.mkdir("/d1/sub");
        FuzzTarget.file(fs, "/d1/mid", 3 * blockSize + 17);
        FuzzTarget.file(fs, "/d1/sub/big", 40 * blockSize + 5);
        fs.mkdir("/many");
        for (int i = 0; i < 24; i++) {
            FuzzTarget.file(fs, String.format("/many/a-rather-long-file-name-number-%02d", i), 100 + i);
        }
        sparse(fs, blockSize);
        fallocated(fs, blockSize);
        fragmented(fs, blockSize);
        if (clones) {
            cloned(fs, blockSize);
        }
        fs.mkdir("/w");
        FuzzTarget.file(fs, "/w/append", 5000);
        FuzzTarget.file(fs, "/w/overwrite", 3 * blockSize + 100);
        FuzzTarget.file(fs, "/w/truncate", 10000);
        FuzzTarget.file(fs, "/w/delete", 2000);
        fs.sync();
    }

    private static void sparse(IomapFileSystem fs, int blockSize) throws IOException {
        long seed = FuzzTarget.seedOf("/sparse");
        try (IomapFile file = fs.create("/sparse")) {
            file.write(0, TestData.buffer(seed, 0, blockSize));
            file.write(20L * blockSize, TestData.buffer(seed, 20L * blockSize, blockSize + 7));
        }
    }

    private static void fallocated(IomapFileSystem fs, int blockSize) throws IOException {
        try (IomapFile file = fs.create("/falloc")) {
            file.write(0, TestData.buffer(FuzzTarget.seedOf("/falloc"), 0, 4 * blockSize));
            file.fsync();
            file.fallocate(FallocateMode.ALLOCATE, 6L * blockSize, 3L * blockSize, false);
            file.fallocate(FallocateMode.ALLOCATE, 9L * blockSize, 2L * blockSize, true);
            file.fallocate(FallocateMode.PUNCH_HOLE, blockSize, blockSize, true);
        }
    }

    private static void fragmented(IomapFileSystem fs, int blockSize) throws IOException {
        try (IomapFile file = fs.create("/frag")) {
            file.write(0, TestData.buffer(FuzzTarget.seedOf("/frag"), 0, 16 * blockSize));
            file.fsync();
            for (int block = 1; block < 16; block += 2) {
                file.fallocate(FallocateMode.PUNCH_HOLE, (long) block * blockSize, blockSize, true);
            }
        }
    }

    private static void cloned(IomapFileSystem fs, int blockSize) throws IOException {
        int length = 8 * blockSize + 100;
        FuzzTarget.file(fs, "/orig", length);
        try (IomapFile orig = fs.open("/orig"); IomapFile clone = fs.create("/clone")) {
            orig.fsync();
            clone.cloneRange(orig, 0, 0, length);
            clone.write(2L * blockSize, TestData.buffer(FuzzTarget.seedOf("/clone"), 2L * blockSize, blockSize));
            clone.fsync();
        }
    }

    /** Append, overwrite, truncate, delete, a new directory with a file, a new file, sync: all under /w. */
    static Workload workload(FileTree original, int blockSize) {
        long appendAt = original.nodes().get("/w/append").size();
        List<Workload.Step> steps = new ArrayList<>();
        steps.add(Workload.write("/w/append", appendAt, 11, 3000));
        steps.add(Workload.write("/w/overwrite", blockSize / 2, 12, blockSize));
        steps.add(Workload.truncate("/w/truncate", 3333));
        steps.add(Workload.unlink("/w/delete"));
        steps.add(Workload.mkdir("/w/newdir"));
        steps.add(Workload.create("/w/newdir/new", 13, 2 * blockSize + 500));
        steps.add(Workload.create("/w/new2", 14, 1000));
        steps.add(Workload.sync());
        return new Workload(steps, path -> path.startsWith("/w/"));
    }
}
