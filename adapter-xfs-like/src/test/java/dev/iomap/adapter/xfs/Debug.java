package dev.iomap.adapter.xfs;

import dev.iomap.api.IomapFileSystem;
import java.lang.reflect.Field;

/** Test-only access to a mount's in-memory state behind the core's VFS, for failure reports. */
final class Debug {

    private Debug() {
    }

    static XfsLikeMount mount(IomapFileSystem fs) {
        try {
            Field field = fs.getClass().getDeclaredField("mount");
            field.setAccessible(true);
            return (XfsLikeMount) field.get(fs);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
    }

    static String describe(IomapFileSystem fs, long ino) {
        InodeState inode = mount(fs).volume().inodes.get(ino);
        if (inode == null) {
            return "inode " + ino + " is free";
        }
        return "inode " + ino + " size " + inode.diskSize + " seq " + inode.sequence + "\n data " + inode.data.extents()
                + "\n cow " + inode.cow.extents();
    }
}
