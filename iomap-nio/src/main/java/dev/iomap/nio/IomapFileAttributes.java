package dev.iomap.nio;

import dev.iomap.api.FileStat;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * {@link BasicFileAttributes} from a {@link FileStat}. The file systems keep one time, the last
 * modification; access and creation times report it too. The file key is the inode number.
 *
 * @param stat what the file system said
 */
record IomapFileAttributes(FileStat stat) implements BasicFileAttributes {
    /** The names {@code readAttributes(path, "basic:*")} returns, in order. */
    static final java.util.List<String> NAMES = java.util.List.of("lastModifiedTime", "lastAccessTime",
            "creationTime", "size", "isRegularFile", "isDirectory", "isSymbolicLink", "isOther", "fileKey");

    @Override
    public FileTime lastModifiedTime() {
        return FileTime.fromMillis(stat.modifiedMillis());
    }

    @Override
    public FileTime lastAccessTime() {
        return lastModifiedTime();
    }

    @Override
    public FileTime creationTime() {
        return lastModifiedTime();
    }

    @Override
    public boolean isRegularFile() {
        return !stat.isDirectory();
    }

    @Override
    public boolean isDirectory() {
        return stat.isDirectory();
    }

    @Override
    public boolean isSymbolicLink() {
        return false;
    }

    @Override
    public boolean isOther() {
        return false;
    }

    @Override
    public long size() {
        return stat.size();
    }

    @Override
    public Object fileKey() {
        return stat.ino();
    }

    /**
     * @param names attribute names of the basic view, or "*"
     * @return the values by name, in the order asked
     * @throws IllegalArgumentException for a name the basic view does not have
     */
    Map<String, Object> toMap(String[] names) {
        Map<String, Object> values = new LinkedHashMap<>();
        for (String name : names) {
            if (name.equals("*")) {
                NAMES.forEach(each -> values.put(each, value(each)));
            } else if (NAMES.contains(name)) {
                values.put(name, value(name));
            } else {
                throw new IllegalArgumentException("'" + name + "' is not an attribute of the basic view");
            }
        }
        return values;
    }

    private Object value(String name) {
        return switch (name) {
            case "lastModifiedTime" -> lastModifiedTime();
            case "lastAccessTime" -> lastAccessTime();
            case "creationTime" -> creationTime();
            case "size" -> size();
            case "isRegularFile" -> isRegularFile();
            case "isDirectory" -> isDirectory();
            case "isSymbolicLink" -> isSymbolicLink();
            case "isOther" -> isOther();
            case "fileKey" -> fileKey();
            default -> throw new IllegalArgumentException(name);
        };
    }
}
