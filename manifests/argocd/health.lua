-- Argo CD health check for scheduling.schedops.io/SchedulerProfile.
-- Healthy only once the operator has observed the current generation and reports Ready=True.
local hs = {}
local status = obj.status
if status == nil or status.observedGeneration == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to observe the SchedulerProfile"
  return hs
end
if obj.metadata.generation ~= nil and status.observedGeneration < obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the operator to observe generation " .. obj.metadata.generation
  return hs
end
local conditions = {}
for _, condition in ipairs(status.conditions or {}) do
  conditions[condition.type] = condition
end
local config = conditions["ConfigValid"]
if config ~= nil and config.status == "False" then
  hs.status = "Degraded"
  hs.message = config.message
  return hs
end
local ready = conditions["Ready"]
if ready == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the Ready condition"
elseif ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message
elseif ready.reason == "RollingOut" or ready.reason == "Unavailable" then
  hs.status = "Progressing"
  hs.message = ready.message
else
  hs.status = "Degraded"
  hs.message = ready.message
end
return hs
