package dev.iomap.it.fuzz;

import dev.iomap.api.FsckReport;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.device.BlockDevice;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.util.List;

/**
 * A pristine image of one target, cleanly unmounted (or, for a target that asks, taken while mounted
 * after a sync: a crash image whose journal holds live transactions), with its files as a mount reads
 * them back, the map of its blocks, what fsck says of it, and the workload run on its mutants.
 *
 * @param target the adapter and geometry
 * @param image the image (never mounted again: mutants are copies)
 * @param tree every file and directory, with contents
 * @param map what each block holds
 * @param workload the write workload of its mutants
 * @param problems what fsck reports on the pristine image: nothing, or for a crash image that it was
 *     not cleanly unmounted; a mutant's fsck is clean if it reports nothing else
 * @param lastTransaction a crash image's blocks of the journal's last transaction, else empty
 * @param previousTree a crash image's files as they read without its last transaction, else null
 */
record BaseImage(FuzzTarget target, RamBlockDevice image, FileTree tree, ImageMap map, Workload workload,
        List<String> problems, java.util.Set<Long> lastTransaction, FileTree previousTree) {

    BaseImage {
        problems = List.copyOf(problems);
        lastTransaction = java.util.Set.copyOf(lastTransaction);
    }

    /** Formats, populates and unmounts an image (or takes a crash image), then reads it back and maps it. */
    static BaseImage build(FuzzTarget target) throws IOException {
        RamBlockDevice image = target.newImage();
        BlockDevice formatting = target.formatting(image);
        IomapFileSystems.format(target.adapter(), formatting, target.formatOptions());
        RamBlockDevice pristine = null;
        try (IomapFileSystem fs = IomapFileSystems.mount(target.adapter(), formatting,
                target.mountGeometry().mountOptions(false))) {
            target.populate(fs);
            if (target.crashImage()) {
                pristine = image.copy();
            }
        }
        target.release(formatting);
        if (pristine == null) {
            pristine = image.copy();
        }
        FileTree tree;
        RamBlockDevice reading = pristine.copy();
        BlockDevice device = target.opening(reading);
        try (IomapFileSystem fs = IomapFileSystems.mount(target.adapter(), device,
                target.mountGeometry().mountOptions(false))) {
            tree = FileTree.read(fs);
        }
        target.release(device);
        BlockDevice checking = target.opening(pristine.copy());
        FsckReport report = IomapFileSystems.fsck(target.adapter(), checking);
        target.release(checking);
        if (!report.isClean() && !target.crashImage()) {
            throw new IllegalStateException(target + ": the pristine image is not clean: " + report.problems());
        }
        ImageMap map = ImageMap.of(pristine, target, tree);
        java.util.Set<Long> last = target.lastTransactionBlocks(pristine, map);
        FileTree previous = null;
        if (!last.isEmpty()) {
            RamBlockDevice torn = pristine.copy();
            long commit = java.util.Collections.max(last);
            torn.poke(commit * target.blockSize(), new byte[target.blockSize()], 0, target.blockSize());
            previous = read(target, torn);
        }
        return new BaseImage(target, pristine, tree, map, target.workload(tree), report.problems(), last, previous);
    }

    private static FileTree read(FuzzTarget target, RamBlockDevice image) throws IOException {
        BlockDevice device = target.opening(image);
        try (IomapFileSystem fs = IomapFileSystems.mount(target.adapter(), device,
                target.mountGeometry().mountOptions(false))) {
            return FileTree.read(fs);
        } finally {
            target.release(device);
        }
    }
}
