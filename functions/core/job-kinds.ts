import type { JobKind } from './background-jobs';
import { copyJob } from './copy';
import { deleteJob } from './delete-folder';
import { emptyTrashJob } from './empty-trash';
import { emptyJob } from './folders';
import { type MoveDeps, moveJob } from './move';
import { restoreJob } from './restore-folder';
import type { Job, JobStore, ObjectCopier, TrashStore } from './ports';

/** What a step of any kind of job may use. */
export type JobStepDeps = MoveDeps & { objects: ObjectCopier; jobs: JobStore; trash?: TrashStore };

/** Every kind of job, by the kind a job notes: `advanceJob` runs a job's step through it. */
export const JOB_KINDS: Record<Job['kind'], JobKind<JobStepDeps>> = {
  delete: deleteJob,
  move: moveJob,
  copy: copyJob,
  empty: emptyJob,
  restore: restoreJob,
  'empty-trash': emptyTrashJob,
};
