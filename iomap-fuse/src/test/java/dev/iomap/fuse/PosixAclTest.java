package dev.iomap.fuse;

import static dev.iomap.fuse.PosixAcl.GROUP;
import static dev.iomap.fuse.PosixAcl.GROUP_OBJ;
import static dev.iomap.fuse.PosixAcl.MASK;
import static dev.iomap.fuse.PosixAcl.OTHER;
import static dev.iomap.fuse.PosixAcl.UNDEFINED_ID;
import static dev.iomap.fuse.PosixAcl.USER;
import static dev.iomap.fuse.PosixAcl.USER_OBJ;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The ACL codec and the kernel's algorithms on it (fs/posix_acl.c), byte for byte and bit for bit. */
class PosixAclTest {
    private static PosixAcl.Entry e(int tag, int perm) {
        return new PosixAcl.Entry(tag, perm, UNDEFINED_ID);
    }

    private static PosixAcl.Entry named(int tag, int perm, int id) {
        return new PosixAcl.Entry(tag, perm, id);
    }

    /** {@code user::rw-,user:65534:r--,group::r-x,mask::r-x,other::---}. */
    private static final PosixAcl WITH_NOBODY = new PosixAcl(List.of(e(USER_OBJ, 6), named(USER, 4, 65534),
            e(GROUP_OBJ, 5), e(MASK, 5), e(OTHER, 0)));

    @Test
    void encodesAsTheKernelsLittleEndianXattrAndParsesItBack() throws Exception {
        byte[] bytes = WITH_NOBODY.encode();
        assertThat(HexFormat.of().formatHex(bytes)).isEqualTo("02000000"
                + "01000600ffffffff" + "02000400feff0000" + "04000500ffffffff" + "10000500ffffffff" + "20000000ffffffff");
        assertThat(PosixAcl.parse(bytes)).isEqualTo(WITH_NOBODY);
    }

    @Test
    void aHeaderAloneIsAnEmptyAclAndTheIdsOfUnnamedEntriesAreIgnored() throws Exception {
        assertThat(PosixAcl.parse(HexFormat.of().parseHex("02000000")).isEmpty()).isTrue();
        PosixAcl acl = PosixAcl.parse(HexFormat.of().parseHex("02000000" + "0100070000000000" + "0400050007000000"
                + "2000040000000000"));
        assertThat(acl).isEqualTo(PosixAcl.ofMode(0754));
    }

    @Test
    void malformedValuesAreInvalidAndAnotherVersionIsNotSupported() {
        for (String hex : List.of("", "020000", "02000000010006", // short
                "02000000" + "0100060000000000",                 // no group or other
                "02000000" + "0400060000000000" + "0100060000000000" + "2000000000000000", // out of order
                "02000000" + "0100060000000000" + "0200040001000000" + "0400040000000000"
                        + "2000000000000000",                  // a named user without a mask
                "02000000" + "0100080000000000" + "0400040000000000" + "2000000000000000", // perm 010
                "02000000" + "0100060000000000" + "0100060000000000" + "0400040000000000"
                        + "2000000000000000",                  // two owners
                "02000000" + "0100060000000000" + "0400040000000000" + "4000000000000000")) { // unknown tag
            assertThatThrownBy(() -> PosixAcl.parse(HexFormat.of().parseHex(hex))).as(hex)
                    .isInstanceOfSatisfying(ErrnoException.class, e -> assertThat(e.errno()).isEqualTo(LinuxErrno.EINVAL));
        }
        assertThatThrownBy(() -> PosixAcl.parse(HexFormat.of().parseHex("01000000" + "0100060000000000")))
                .isInstanceOfSatisfying(ErrnoException.class, e -> assertThat(e.errno()).isEqualTo(LinuxErrno.EOPNOTSUPP));
    }

    @Test
    void theMaskOrElseTheOwningGroupGivesTheModesGroupBits() {
        assertThat(Integer.toOctalString(WITH_NOBODY.equivalentMode(02777))).isEqualTo("2650");
        assertThat(WITH_NOBODY.isEquivalentToMode()).isFalse();
        PosixAcl plain = PosixAcl.ofMode(0640);
        assertThat(Integer.toOctalString(plain.equivalentMode(0100777))).isEqualTo("100640");
        assertThat(plain.isEquivalentToMode()).isTrue();
        PosixAcl maskOnly = new PosixAcl(List.of(e(USER_OBJ, 7), e(GROUP_OBJ, 7), e(MASK, 1), e(OTHER, 0)));
        assertThat(Integer.toOctalString(maskOnly.equivalentMode(0))).isEqualTo("710");
        assertThat(maskOnly.isEquivalentToMode()).isFalse();
    }

    @Test
    void chmodRewritesOwnerMaskAndOtherButKeepsTheOwningGroupBehindAMask() {
        assertThat(WITH_NOBODY.chmod(0751)).isEqualTo(new PosixAcl(List.of(e(USER_OBJ, 7), named(USER, 4, 65534),
                e(GROUP_OBJ, 5), e(MASK, 5), e(OTHER, 1))));
        assertThat(WITH_NOBODY.chmod(0700).entries().get(3)).isEqualTo(e(MASK, 0));
        assertThat(PosixAcl.ofMode(0644).chmod(0720)).isEqualTo(PosixAcl.ofMode(0720));
    }

    @Test
    void aNewFileTakesTheDefaultAclMaskedByItsModeAndNoUmask() {
        PosixAcl defaults = new PosixAcl(List.of(e(USER_OBJ, 7), named(USER, 7, 1000), e(GROUP_OBJ, 5),
                named(GROUP, 6, 100), e(MASK, 7), e(OTHER, 5)));
        PosixAcl.Inherited file = defaults.create(0666);
        assertThat(Integer.toOctalString(file.mode())).isEqualTo("664");
        assertThat(file.accessAcl()).isEqualTo(new PosixAcl(List.of(e(USER_OBJ, 6), named(USER, 7, 1000),
                e(GROUP_OBJ, 5), named(GROUP, 6, 100), e(MASK, 6), e(OTHER, 4))));
        PosixAcl.Inherited directory = defaults.create(02777);
        assertThat(Integer.toOctalString(directory.mode())).isEqualTo("2775");
        assertThat(directory.accessAcl()).isEqualTo(defaults);
    }

    @Test
    void aDefaultAclThatTheModeSaysInFullLeavesOnlyAMode() {
        PosixAcl.Inherited created = PosixAcl.ofMode(0750).create(0666);
        assertThat(Integer.toOctalString(created.mode())).isEqualTo("640");
        assertThat(created.accessAcl()).isNull();
    }
}
