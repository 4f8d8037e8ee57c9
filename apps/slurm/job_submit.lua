-- job_submit.lua for a cluster scheduled by gpusched-slurm (Slurm's JobSubmitPlugins=lua).
-- Every new job of a managed partition is held (priority 0), so Slurm's own scheduler never
-- starts it; gpusched-slurm sets its node list and releases it. Install as
-- /etc/slurm/job_submit.lua next to slurm.conf and set JobSubmitPlugins=lua.

-- Partitions gpusched-slurm manages (nil: every partition).
local managed = nil -- e.g. { gpu = true }

function slurm_job_submit(job_desc, part_list, submit_uid)
  local part = job_desc.partition
  if managed == nil or (part ~= nil and managed[part]) then
    job_desc.priority = 0 -- held: JobHeldAdmin until gpusched-slurm releases it
  end
  return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  return slurm.SUCCESS
end

return slurm.SUCCESS
