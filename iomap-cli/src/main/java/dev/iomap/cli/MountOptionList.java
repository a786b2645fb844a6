package dev.iomap.cli;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * {@code iomap mount -o LIST}, as {@code mount -t fuse.iomap IMAGE DIR -o LIST} and an fstab line give it:
 * every option of {@code iomap mount} has an {@code -o} spelling, its long name without the dashes, with
 * {@code _} or {@code -} between words ({@code -o adapter=gfs2-like,node_id=a,read_ahead=2m,no_flusher}).
 * Each element of a list is one of:
 *
 * <ul>
 *   <li>an option of {@code iomap mount} ({@code --KEY}; a flag without a value): applied as if given so;
 *   <li>a FUSE or kernel mount option ({@link #FUSE}: {@code allow_other}, {@code ro}, {@code noatime},
 *       {@code attr_timeout=1}, ...): handed to libfuse;
 *   <li>an option {@code mount(8)} keeps for itself ({@link #MOUNT_ONLY}: {@code defaults}, {@code noauto},
 *       {@code nofail}, {@code _netdev}, {@code x-*}, {@code comment=*}, ...): dropped;
 *   <li>anything else: an option of the adapter, as {@code -O KEY[=VALUE]} ({@code data=journal}); the
 *       adapter refuses one it does not know.
 * </ul>
 *
 * <p>Commas inside a value: a backslash before the comma ({@code cluster=zk=h1:2181\,h2:2181}, as libfuse's
 * own option parser reads it), or the value in double quotes ({@code cluster="zk=h1:2181,h2:2181"}, as
 * libmount reads an fstab line); a backslash before any other character stands for that character.
 */
final class MountOptionList {

    /** Options libfuse and the kernel take: given to the FUSE mount. */
    static final Set<String> FUSE = Set.of("allow_other", "allow_root", "auto_unmount", "default_permissions",
            "max_read", "blksize", "context", "fscontext", "defcontext", "rootcontext", "fsname", "subtype", "ro",
            "rw", "suid", "nosuid", "dev", "nodev", "exec", "noexec", "async", "sync", "dirsync", "atime",
            "noatime", "diratime", "nodiratime", "relatime", "norelatime", "strictatime", "nostrictatime",
            "lazytime", "nolazytime", "symfollow", "nosymfollow", "debug", "attr_timeout", "entry_timeout",
            "direct_io", "writeback_cache", "use_ino", "readdir_ino", "hard_remove", "kernel_cache",
            "auto_cache", "noauto_cache", "negative_timeout", "ac_attr_timeout", "remember", "noforget", "nopath",
            "intr", "intr_signal");

    /** Options of {@code mount(8)} and fstab that are not the file system's: dropped. */
    static final Set<String> MOUNT_ONLY = Set.of("defaults", "auto", "noauto", "user", "nouser", "users", "owner",
            "group", "_netdev", "nofail", "loop", "sw", "xx");

    /**
     * One element of a list.
     *
     * @param key its name
     * @param value its value, or null for a flag
     */
    record Item(String key, String value) {

        /** @return it as written ({@code key} or {@code key=value}), for libfuse or -O */
        String text() {
            return value == null ? key : key + "=" + value;
        }

        /** @return whether {@code mount(8)} keeps it for itself */
        boolean mountOnly() {
            return MOUNT_ONLY.contains(key) || key.startsWith("x-") || key.equals("comment")
                    || key.equals("helper");
        }
    }

    private MountOptionList() {
    }

    /**
     * @param list an {@code -o} list
     * @return its elements, unescaped, in order (empty ones skipped)
     * @throws UsageException for a double quote that is not closed, or a backslash at the end
     */
    static List<Item> parse(String list) throws UsageException {
        List<Item> items = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        int keyEnd = -1;
        boolean quoted = false;
        for (int i = 0; i < list.length(); i++) {
            char c = list.charAt(i);
            if (c == '\\') {
                if (++i == list.length()) {
                    throw new UsageException("-o " + list + ": a backslash at the end escapes nothing");
                }
                current.append(list.charAt(i));
            } else if (c == '"') {
                quoted = !quoted;
            } else if (c == ',' && !quoted) {
                add(items, current, keyEnd);
                current.setLength(0);
                keyEnd = -1;
            } else {
                if (c == '=' && keyEnd < 0 && !quoted) {
                    keyEnd = current.length();
                }
                current.append(c);
            }
        }
        if (quoted) {
            throw new UsageException("-o " + list + ": a double quote is not closed");
        }
        add(items, current, keyEnd);
        return items;
    }

    private static void add(List<Item> items, StringBuilder text, int keyEnd) {
        if (text.isEmpty()) {
            return;
        }
        if (keyEnd < 0) {
            items.add(new Item(text.toString(), null));
        } else {
            items.add(new Item(text.substring(0, keyEnd), text.substring(keyEnd + 1)));
        }
    }

    /**
     * @param item an element
     * @return it as one element of libfuse's comma list, commas and backslashes escaped
     */
    static String forLibfuse(Item item) {
        return item.text().replace("\\", "\\\\").replace(",", "\\,");
    }
}
