package dev.iomap.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.api.Capability;
import dev.iomap.api.FileType;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.MountOptions;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.spi.FileOps;
import dev.iomap.spi.FileSystemAdapter;
import dev.iomap.spi.InodeOps;
import dev.iomap.spi.MountedFileSystem;
import dev.iomap.spi.SuperOps;
import dev.iomap.spi.XattrOps;
import dev.iomap.testkit.snapfs.SnapAdapter;
import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RecordingAdapterTest {

    private final RamBlockDevice device = new RamBlockDevice(512, 8L << 20);

    @Test
    void recordsTheCacheHooksInOrderAndRunsTheActionBeforeItsCall() throws IOException {
        RecordingAdapter recorder = new RecordingAdapter(new SnapAdapter());
        recorder.format(device, FormatOptions.blockSize(4096));
        MountedFileSystem mount = recorder.mount(device, MountOptions.defaults());
        long ino = mount.inodeOps().create(mount.rootIno(), "f", FileType.REGULAR);
        mount.inodeOps().unlink(mount.rootIno(), "f");
        List<List<String>> seenByTheAction = new ArrayList<>();
        recorder.beforeCall("unmount", () -> seenByTheAction.add(recorder.calls()));

        mount.superOps().evict(ino);
        mount.superOps().sync();
        mount.superOps().unmount();

        assertThat(recorder.calls()).containsExactly("evict " + ino, "sync", "unmount");
        assertThat(seenByTheAction).containsExactly(List.of("evict " + ino, "sync", "unmount"));
        assertThat(recorder.fsck(device).problems()).isEmpty();
    }

    @Test
    void declaringChangesOnlyTheDeclaration() {
        RecordingAdapter recorder = new RecordingAdapter(new SnapAdapter());
        assertThat(recorder.capabilities()).isEqualTo(SnapAdapter.SUPPORTED);
        assertThat(recorder.name()).isEqualTo(SnapAdapter.NAME);

        RecordingAdapter cloning = recorder.declaring(EnumSet.allOf(Capability.class));

        assertThat(cloning.capabilities()).contains(Capability.CLONE);
        assertThat(recorder.capabilities()).doesNotContain(Capability.CLONE);
    }

    /**
     * A method the SPI gains later, default or not, must be passed on, not silently defaulted: the
     * mount's own methods and those of each of its tables.
     */
    @Test
    void theMountPassesOnEveryMethodOfTheSpi() throws IOException {
        RecordingAdapter recorder = new RecordingAdapter(new SnapAdapter());
        recorder.format(device, FormatOptions.blockSize(4096));
        MountedFileSystem mount = recorder.mount(device, MountOptions.defaults());
        Map<Class<?>, Object> tables = Map.of(MountedFileSystem.class, mount, SuperOps.class, mount.superOps(),
                InodeOps.class, mount.inodeOps(), FileOps.class, mount.fileOps(), XattrOps.class, mount.xattrOps());
        for (var table : tables.entrySet()) {
            for (Method method : table.getKey().getMethods()) {
                if (Modifier.isStatic(method.getModifiers())) {
                    continue;
                }
                assertThat(declares(table.getValue().getClass(), method)).as(method.getName()).isTrue();
            }
        }
        mount.superOps().unmount();
    }

    /** The same for the adapter itself: a refusal before formatting must be the wrapped adapter's. */
    @Test
    void theAdapterPassesOnEveryMethodOfTheSpi() {
        RecordingAdapter recorder = new RecordingAdapter(new SnapAdapter());
        for (Method method : FileSystemAdapter.class.getMethods()) {
            if (Modifier.isStatic(method.getModifiers())) {
                continue;
            }
            assertThat(declares(recorder.getClass(), method)).as(method.getName()).isTrue();
        }
    }

    private static boolean declares(Class<?> type, Method method) {
        try {
            return type.getDeclaredMethod(method.getName(), method.getParameterTypes()) != null;
        } catch (NoSuchMethodException e) {
            return false;
        }
    }
}
