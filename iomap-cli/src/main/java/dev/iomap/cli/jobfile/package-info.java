/**
 * fio job files: {@link dev.iomap.cli.jobfile.JobFileParser} reads the ini syntax (sections,
 * includes, comments, variables) and checks option names; {@link dev.iomap.cli.jobfile.JobResolver}
 * applies {@code [global]} inheritance and fio's defaults and checks values, giving
 * {@link dev.iomap.cli.jobfile.JobSpec}s. Every error names its file and line.
 */
package dev.iomap.cli.jobfile;
