package dev.iomap.examples.ext2;

import dev.iomap.adapter.support.skeleton.SkeletonAdapter;
import dev.iomap.adapter.support.skeleton.SkeletonConfig;

/**
 * The ext2-like adapter: {@link Ext2Model} on adapter-support's skeleton, with one flat namespace (the
 * root directory) whose names can be renamed. What it declares is {@link SkeletonConfig#capabilities()}:
 * truncate, random writes, durable fsync and rename; no directories, fallocate, clone, links or attributes.
 *
 * <p>Not final: the tests plant bugs in subclasses.
 */
public class Ext2Adapter extends SkeletonAdapter {
    /** The adapter's name. */
    public static final String NAME = "ext2-like";
    /** The flat configuration this adapter uses. */
    public static final SkeletonConfig CONFIG = SkeletonConfig.of(NAME,
            "12 direct and one single-indirect pointer per inode, a bitmap, one flat directory (an example)",
            "IOMAPEX2", false);

    /** The ext2-like adapter with its correct model. */
    public Ext2Adapter() {
        this(new Ext2Model());
    }

    /**
     * @param model the model (a test passes one with a planted bug)
     */
    public Ext2Adapter(Ext2Model model) {
        super(CONFIG, model);
    }
}
