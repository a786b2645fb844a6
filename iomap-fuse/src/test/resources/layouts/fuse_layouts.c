/*
 * Prints the sizes and offsets of the libfuse 3 and kernel structs that FuseStructs and KernelAbi
 * describe in Java, one "name value" line each, for FuseStructsTest to compare.
 */
#define FUSE_USE_VERSION 314
#include <fuse_lowlevel.h>
#include <linux/fuse.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#define SIZE(type) printf("sizeof " #type " %zu\n", sizeof(struct type))
#define OFFSET(type, field) printf(#type "." #field " %zu\n", offsetof(struct type, field))
#define SLOT(field) printf("fuse_lowlevel_ops." #field " %zu\n", offsetof(struct fuse_lowlevel_ops, field))

static unsigned file_info_bits(struct fuse_file_info fi) {
	uint32_t word;
	memcpy(&word, (char *) &fi + offsetof(struct fuse_file_info, flags) + sizeof(int), sizeof(word));
	return word;
}

int main(void) {
	SIZE(fuse_lowlevel_ops);
	SLOT(init); SLOT(destroy); SLOT(lookup); SLOT(forget); SLOT(getattr); SLOT(setattr);
	SLOT(readlink); SLOT(mknod); SLOT(mkdir); SLOT(unlink); SLOT(rmdir); SLOT(symlink); SLOT(rename);
	SLOT(link); SLOT(open); SLOT(read); SLOT(write); SLOT(flush); SLOT(release); SLOT(fsync);
	SLOT(opendir); SLOT(readdir); SLOT(releasedir); SLOT(fsyncdir); SLOT(statfs); SLOT(setxattr);
	SLOT(getxattr); SLOT(listxattr); SLOT(removexattr); SLOT(access); SLOT(create); SLOT(getlk);
	SLOT(setlk); SLOT(bmap); SLOT(ioctl); SLOT(poll); SLOT(write_buf); SLOT(retrieve_reply);
	SLOT(forget_multi); SLOT(flock); SLOT(fallocate); SLOT(readdirplus); SLOT(copy_file_range);
	SLOT(lseek);

	SIZE(fuse_entry_param);
	OFFSET(fuse_entry_param, ino); OFFSET(fuse_entry_param, generation); OFFSET(fuse_entry_param, attr);
	OFFSET(fuse_entry_param, attr_timeout); OFFSET(fuse_entry_param, entry_timeout);

	SIZE(fuse_file_info);
	OFFSET(fuse_file_info, flags); OFFSET(fuse_file_info, fh); OFFSET(fuse_file_info, lock_owner);
	OFFSET(fuse_file_info, poll_events);
	{ struct fuse_file_info fi = {0}; fi.writepage = 1; printf("fuse_file_info.writepage_bit %u\n", file_info_bits(fi)); }
	{ struct fuse_file_info fi = {0}; fi.direct_io = 1; printf("fuse_file_info.direct_io_bit %u\n", file_info_bits(fi)); }
	{ struct fuse_file_info fi = {0}; fi.keep_cache = 1; printf("fuse_file_info.keep_cache_bit %u\n", file_info_bits(fi)); }
	{ struct fuse_file_info fi = {0}; fi.flush = 1; printf("fuse_file_info.flush_bit %u\n", file_info_bits(fi)); }
	{ struct fuse_file_info fi = {0}; fi.nonseekable = 1; printf("fuse_file_info.nonseekable_bit %u\n", file_info_bits(fi)); }
	{ struct fuse_file_info fi = {0}; fi.cache_readdir = 1; printf("fuse_file_info.cache_readdir_bit %u\n", file_info_bits(fi)); }
	{ struct fuse_file_info fi = {0}; fi.noflush = 1; printf("fuse_file_info.noflush_bit %u\n", file_info_bits(fi)); }

	SIZE(fuse_conn_info);
	OFFSET(fuse_conn_info, proto_major); OFFSET(fuse_conn_info, proto_minor); OFFSET(fuse_conn_info, max_write);
	OFFSET(fuse_conn_info, max_read); OFFSET(fuse_conn_info, max_readahead); OFFSET(fuse_conn_info, capable);
	OFFSET(fuse_conn_info, want); OFFSET(fuse_conn_info, max_background);
	OFFSET(fuse_conn_info, congestion_threshold); OFFSET(fuse_conn_info, time_gran);

	SIZE(fuse_ctx);
	OFFSET(fuse_ctx, uid); OFFSET(fuse_ctx, gid); OFFSET(fuse_ctx, pid); OFFSET(fuse_ctx, umask);

	SIZE(fuse_forget_data);
	OFFSET(fuse_forget_data, ino); OFFSET(fuse_forget_data, nlookup);

	SIZE(fuse_args);
	OFFSET(fuse_args, argc); OFFSET(fuse_args, argv); OFFSET(fuse_args, allocated);

	SIZE(fuse_loop_config_v1);
	OFFSET(fuse_loop_config_v1, clone_fd); OFFSET(fuse_loop_config_v1, max_idle_threads);

	SIZE(fuse_custom_io);
	OFFSET(fuse_custom_io, writev); OFFSET(fuse_custom_io, read); OFFSET(fuse_custom_io, splice_receive);
	OFFSET(fuse_custom_io, splice_send);

	SIZE(stat);
	OFFSET(stat, st_dev); OFFSET(stat, st_ino); OFFSET(stat, st_nlink); OFFSET(stat, st_mode);
	OFFSET(stat, st_uid); OFFSET(stat, st_gid); OFFSET(stat, st_rdev); OFFSET(stat, st_size);
	OFFSET(stat, st_blksize); OFFSET(stat, st_blocks); OFFSET(stat, st_atim); OFFSET(stat, st_mtim);
	OFFSET(stat, st_ctim);

	SIZE(statvfs);
	OFFSET(statvfs, f_bsize); OFFSET(statvfs, f_frsize); OFFSET(statvfs, f_blocks); OFFSET(statvfs, f_bfree);
	OFFSET(statvfs, f_bavail); OFFSET(statvfs, f_files); OFFSET(statvfs, f_ffree); OFFSET(statvfs, f_favail);
	OFFSET(statvfs, f_fsid); OFFSET(statvfs, f_flag); OFFSET(statvfs, f_namemax);

	SIZE(timespec);
	OFFSET(timespec, tv_sec); OFFSET(timespec, tv_nsec);

	/* The kernel's side of /dev/fuse (linux/fuse.h), which the reply patches and the write flags read. */
	SIZE(fuse_out_header);
	OFFSET(fuse_out_header, len); OFFSET(fuse_out_header, error); OFFSET(fuse_out_header, unique);
	OFFSET(fuse_init_out, flags); OFFSET(fuse_init_out, max_pages); OFFSET(fuse_init_out, flags2);
	SIZE(fuse_open_out);
	OFFSET(fuse_open_out, fh); OFFSET(fuse_open_out, open_flags);
	SIZE(fuse_entry_out);
	SIZE(fuse_write_in);
	OFFSET(fuse_write_in, fh); OFFSET(fuse_write_in, offset); OFFSET(fuse_write_in, size);
	OFFSET(fuse_write_in, write_flags);
	printf("FUSE_HANDLE_KILLPRIV_V2 %u\n", (unsigned) FUSE_HANDLE_KILLPRIV_V2);
	printf("FUSE_INIT_EXT %u\n", (unsigned) FUSE_INIT_EXT);
	printf("FOPEN_PARALLEL_DIRECT_WRITES %u\n", (unsigned) FOPEN_PARALLEL_DIRECT_WRITES);
	printf("FUSE_WRITE_KILL_SUIDGID %u\n", (unsigned) FUSE_WRITE_KILL_SUIDGID);
	printf("FATTR_KILL_SUIDGID %u\n", (unsigned) FATTR_KILL_SUIDGID);
	printf("FUSE_SET_ATTR_KILL_SUID %u\n", (unsigned) FUSE_SET_ATTR_KILL_SUID);
	return 0;
}
