package dev.iomap.adapter.xfs;

import static org.assertj.core.api.Assertions.assertThat;

import dev.iomap.device.DeviceStats;
import dev.iomap.api.FormatOptions;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import dev.iomap.api.IomapFileSystems;
import dev.iomap.api.MountOptions;
import dev.iomap.api.PageCacheOptions;
import dev.iomap.devices.RamBlockDevice;
import dev.iomap.testkit.TestData;
import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The seed's fio job (test_randwrite.fio: overwrite=1, pre_read=1, bs=4k, randwrite, fdatasync=1) scaled
 * down, on 64 KiB pages: a laid-out file is read, then 4 KiB blocks are overwritten at random, each
 * followed by fdatasync. Overwriting written blocks changes no metadata, so fdatasync commits nothing and
 * the device writes exactly the dirty blocks (per-block dirty tracking) or whole 64 KiB folios (without).
 */
class WriteAmplificationTest {
    private static final int FILE_BYTES = 8 << 20;
    private static final int WRITES = 512;

    @ParameterizedTest(name = "perBlockDirty={0}")
    @CsvSource({"true, 1", "false, 16"})
    void randomFourKilobyteWritesWithFdatasync(boolean perBlockDirty, int expectedAmplification) throws Exception {
        PageCacheOptions options = PageCacheOptions.builder().pageSize(65536).maxFolioOrder(0)
                .perBlockDirty(perBlockDirty).build();
        try (RamBlockDevice device = new RamBlockDevice(4096, 64L << 20)) {
            IomapFileSystems.format("xfs-like", device, FormatOptions.blockSize(4096));
            try (IomapFileSystem fs = IomapFileSystems.mount("xfs-like", device, new MountOptions(options, false));
                    IomapFile file = fs.create("/job")) {
                DeviceStats start = device.stats();
                XfsFixture.writeAt(file, 0, TestData.pattern(1, 0, FILE_BYTES));
                file.fsync();
                DeviceStats layout = device.stats().minus(start);
                System.out.printf("xfs-like layout of %d bytes + fsync: data %d, metadata %d bytes%n", FILE_BYTES,
                        layout.dataBytesWritten(), layout.metadataBytesWritten());
                XfsFixture.read(file, 0, FILE_BYTES);
                DeviceStats before = device.stats();
                Random random = new Random(42);
                for (int i = 0; i < WRITES; i++) {
                    long block = random.nextInt(FILE_BYTES / 4096);
                    file.write(block * 4096, ByteBuffer.wrap(TestData.pattern(i, 0, 4096)));
                    file.fdatasync();
                }
                DeviceStats job = device.stats().minus(before);
                long appBytes = (long) WRITES * 4096;
                System.out.printf("xfs-like 4k randwrite+fdatasync, 64k pages, perBlockDirty=%s: app %d, data %d,"
                        + " metadata %d bytes: data WA %.2f, total WA %.2f%n", perBlockDirty, appBytes,
                        job.dataBytesWritten(), job.metadataBytesWritten(),
                        (double) job.dataBytesWritten() / appBytes, (double) job.bytesWritten() / appBytes);
                assertThat(job.dataBytesWritten()).isEqualTo(appBytes * expectedAmplification);
                assertThat(job.metadataBytesWritten()).isZero();
                assertThat(job.bytesRead()).isZero();
            }
            XfsFixture.assertClean(device);
        }
    }
}
