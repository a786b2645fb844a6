package dev.iomap.it.fuzz;

import dev.iomap.api.FsckReport;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.device.BlockDevice;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;

/**
 * A pristine, cleanly unmounted image of one target with its files as read back after a remount,
 * the map of its blocks, and the workload run on its mutants.
 *
 * @param target the adapter and geometry
 * @param image the image (never mounted again: mutants are copies)
 * @param tree every file and directory, with contents
 * @param map what each block holds
 * @param workload the write workload of its mutants
 */
record BaseImage(FuzzTarget target, RamBlockDevice image, FileTree tree, ImageMap map, Workload workload) {

    /** Formats, populates and unmounts an image, then reads it back and maps it. */
    static BaseImage build(FuzzTarget target) throws IOException {
        RamBlockDevice image = target.newImage();
        BlockDevice formatting = target.formatting(image);
        IomapFileSystems.format(target.adapter(), formatting, target.formatOptions());
        try (IomapFileSystem fs = IomapFileSystems.mount(target.adapter(), formatting,
                target.mountGeometry().mountOptions(false))) {
            target.populate(fs);
        }
        target.release(formatting);
        RamBlockDevice pristine = image.copy();
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
        if (!report.isClean()) {
            throw new IllegalStateException(target + ": the pristine image is not clean: " + report.problems());
        }
        ImageMap map = ImageMap.of(pristine, target, tree);
        return new BaseImage(target, pristine, tree, map, target.workload(tree));
    }
}
