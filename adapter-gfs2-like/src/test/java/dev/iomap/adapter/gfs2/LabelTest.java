package dev.iomap.adapter.gfs2;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.MountOptions;
import dev.iomap.api.NotSupportedException;
import dev.iomap.core.vfs.CoreRuntime;
import dev.iomap.devices.RamBlockDevice;
import java.io.IOException;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The label ({@code FS_IOC_GETFSLABEL}): a mount answers what mkfs wrote; setting it on a mounted
 * file system is refused, since the other nodes of a cluster read the superblock only at mount (GFS2's
 * label changes only unmounted, with {@code tunegfs2 -L}), and nothing is written.
 */
class LabelTest {
    @Test
    void aMountAnswersTheLabelMkfsWroteAndRefusesToChangeIt() throws IOException {
        try (RamBlockDevice device = new RamBlockDevice(4096, 64L << 20)) {
            new Gfs2LikeAdapter().format(device, new FormatOptions(4096, "cluster-a", Map.of()));
            try (IomapFileSystem fs = CoreRuntime.mount(new Gfs2LikeAdapter(), device, MountOptions.defaults())) {
                assertThat(fs.label()).isEqualTo("cluster-a");
                long writes = device.stats().writes();
                assertThatThrownBy(() -> fs.setLabel("cluster-b")).isInstanceOf(NotSupportedException.class)
                        .hasMessageContaining("mkfs");
                assertThat(device.stats().writes()).isEqualTo(writes);
                assertThat(fs.label()).isEqualTo("cluster-a");
            }
            assertThat(Gfs2Layout.read(device).label()).isEqualTo("cluster-a");
        }
    }
}
