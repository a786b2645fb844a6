package dev.iomap.fuse;

import static org.assertj.core.api.Assertions.assertThat;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.anyLong;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import dev.iomap.api.Capability;
import dev.iomap.api.FileStat;
import dev.iomap.api.FileType;
import dev.iomap.api.FsStat;
import dev.iomap.api.IomapFile;
import dev.iomap.api.IomapFileSystem;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** copy_file_range's choice between sharing blocks and copying bytes, over mocked files of 4 KiB blocks. */
class RangeCopyTest {
    static final int BLOCK = 4096;
    IomapFileSystem fs;
    IomapFile in;
    IomapFile out;
    byte[] source;
    /** Every write to {@code out}: offset, then the bytes. */
    ByteArrayOutputStream written;
    long firstWrite;

    @BeforeEach
    void setUp() throws Exception {
        fs = mock(IomapFileSystem.class);
        when(fs.capabilities()).thenReturn(EnumSet.of(Capability.CLONE, Capability.COPY_ON_WRITE));
        FsStat statfs = mock(FsStat.class);
        when(statfs.blockSize()).thenReturn(BLOCK);
        when(fs.statfs()).thenReturn(statfs);
        source = new byte[20_000];
        new Random(3).nextBytes(source);
        in = file(1, source.length);
        out = file(2, 0);
        written = new ByteArrayOutputStream();
        firstWrite = -1;
        when(in.read(anyLong(), any())).thenAnswer(call -> {
            long pos = call.getArgument(0);
            ByteBuffer dst = call.getArgument(1);
            if (pos >= source.length) {
                return -1;
            }
            int n = (int) Math.min(dst.remaining(), source.length - pos);
            dst.put(source, (int) pos, n);
            return n;
        });
        when(out.write(anyLong(), any())).thenAnswer(call -> {
            long pos = call.getArgument(0);
            ByteBuffer src = call.getArgument(1);
            if (firstWrite < 0) {
                firstWrite = pos;
            }
            assertThat(pos).as("writes follow each other").isEqualTo(firstWrite + written.size());
            int n = src.remaining();
            byte[] bytes = new byte[n];
            src.get(bytes);
            written.writeBytes(bytes);
            return n;
        });
    }

    private static IomapFile file(long ino, long size) throws Exception {
        IomapFile file = mock(IomapFile.class);
        when(file.size()).thenReturn(size);
        when(file.stat()).thenReturn(new FileStat(ino, FileType.REGULAR, size, 0, 1, 0));
        return file;
    }

    @Test
    void alignedOffsetsShareTheWholeBlocksAndCopyTheTail() throws Exception {
        assertThat(RangeCopy.copy(fs, in, 0, out, 8192, 10_000)).isEqualTo(10_000);
        verify(out).cloneRange(in, 0, 8192, 8192);
        assertThat(firstWrite).isEqualTo(8192 + 8192);
        assertThat(written.toByteArray()).isEqualTo(Arrays.copyOfRange(source, 8192, 10_000));
    }

    @Test
    void aRangeToTheSourcesEofPastTheDestinationsEofIsSharedWhole() throws Exception {
        assertThat(RangeCopy.copy(fs, in, 4096, out, 0, 1 << 20)).as("cut at the source's EOF").isEqualTo(15_904);
        verify(out).cloneRange(in, 4096, 0, 15_904);
        assertThat(written.size()).isZero();
    }

    @Test
    void misalignedOffsetsOrNoCloneCopyTheBytes() throws Exception {
        assertThat(RangeCopy.copy(fs, in, 100, out, 0, 9000)).isEqualTo(9000);
        assertThat(written.toByteArray()).isEqualTo(Arrays.copyOfRange(source, 100, 9100));
        verify(out, never()).cloneRange(any(), anyLong(), anyLong(), anyLong());

        when(fs.capabilities()).thenReturn(EnumSet.of(Capability.DIRECTORIES));
        written.reset();
        firstWrite = -1;
        assertThat(RangeCopy.copy(fs, in, 0, out, 0, 20_000)).isEqualTo(20_000);
        assertThat(written.toByteArray()).isEqualTo(source);
        verify(out, never()).cloneRange(any(), anyLong(), anyLong(), anyLong());
    }

    @Test
    void atOrPastEofNothingIsCopiedAndBadArgumentsAreEinval() throws Exception {
        assertThat(RangeCopy.copy(fs, in, 20_000, out, 0, 10)).isZero();
        assertThat(RangeCopy.copy(fs, in, 0, out, 0, 0)).isZero();
        assertThat(RangeCopy.copy(fs, in, -1, out, 0, 10)).isEqualTo(-LinuxErrno.EINVAL);
        IomapFile sameInode = file(1, source.length);
        assertThat(RangeCopy.copy(fs, in, 0, sameInode, 4096, 8192)).as("overlapping ranges of one file")
                .isEqualTo(-LinuxErrno.EINVAL);
        verify(sameInode, never()).write(anyLong(), any());
        verify(out, never()).cloneRange(any(), anyLong(), anyLong(), anyLong());
    }
}
