// What limits a training step, as the limiting column of a sweep's rows names it: the largest
// part of the step's breakdown (StepResult), the kernels' slowdown beside the overlapped
// collectives (collective_stretch_s, a part of compute_s) weighed as data-parallel
// communication: the collectives' SMs slow the kernels for as long as the collectives run, so a
// faster link shortens it (scenarios/huaweicloud_ascend_vs_a100's ZeRO-3 row on 8 PCIe A100s:
// 64.8 s of compute against 33.9 s under ZeRO-1; PCIe x1.25 saves 13.7% of the step, the peaks
// x1.25 5.8%). And where the data-parallel collectives outlast the last backward, the share of
// the task work done beside their last spell without a gap (work_beside_collectives_share: the
// kernels, the tensor- and context-parallel collectives inside the tasks) goes with them too:
// from the spell's start the step waits on the collectives, so faster kernels shorten only what
// ran before it (mlperf-v5.1-llama3.1-8b-gb300-512: the peaks x1.25 save 0.6% of the step,
// NVLink x1.25 10.8%); so does the work beside each ZeRO-3 chain of gathers run back to back
// that the compute then waited for (zero3_traffic.h): faster kernels there only wait longer
// (scenarios/huaweicloud_ascend_vs_a100's ZeRO-3 row under full recomputation: PCIe x1.25 saves
// 12.2% of the step, the GPU 7.8%). Or, where an expert- or tensor-parallel group crosses an
// NVLink domain's edge and its traffic over the scale-out network is the largest part of the
// step beside the compute, that crossing, named so: "expert-parallel all-to-all across NVLink
// domains (scale-out network)", after "compute, then " where the compute is larger still.
// The parenthesis names the link that binds the crossing's bytes (the expert all-to-alls' traffic
// across domains, or the tensor-parallel ring's channels: ring_binding_link): the scale-out
// network (NIC and fabric), or, where that is faster than the rest of the route, "PCIe between
// GPU and NIC", or NVLink: "NVLink to the NIC's GPU" (the expert traffic's way to a NIC another
// GPU owns), "NVLink inside each domain" (the ring's hops between the crossings)
// (Network::prepared_binding_link): more of what it names shortens that traffic, more scale-out
// bandwidth then does not. The scale-out network's step latency is not weighed: a crossing of
// few bytes a step is named by the link its bytes bind, while its time is mostly that latency.
//
// The expert all-to-alls' scale-out time is simulated (pipeline_expert_all_to_all.cpp: how long
// their traffic across domains was in flight, the compute stopped). On the critical stage it is
// a part of the all-to-all time; on another stage, one the critical stage waits for in the
// lockstep step (a group straddling two racks while the others fit), it shows there as bubble.
// So the parts it is weighed against are the breakdown's with it taken out of the one that holds
// it: the all-to-all time less the critical stage's scale-out time, the bubble less what the
// slowest stage's scale-out time exceeds it by.
//
// Parts that bind on one kind of link (part_links.h: the tensor-, context- and data-parallel
// traffic, the data-parallel part with what is weighed with it above) are weighed together: where
// two or more share one and together outlast the largest part, which is none of them, the label
// names the link, "PCIe shared by tensor- and data-parallel communication": a faster link
// shortens them all (scenarios/huaweicloud_ascend_vs_a100's TP 2 x DP 4 ZeRO-3 rows on 8 PCIe
// A100s: kernels 34.5 s, data-parallel 28.9 s, tensor-parallel 16.7 s; PCIe x1.25 saves 11.4% of
// the step, the GPU 8.6%). A part that is the largest alone keeps its name.
//
// The ZeRO-3 waits DeepSpeed 2021's coordinator ended at its fetch rate (fetch_paced_wait_s,
// zero3_traffic.h) are that rate's, not a link's: taken out of the data-parallel part, they are
// named "DeepSpeed 2021's ZeRO-3 fetch rate" where they are the largest part (a software rate:
// a newer DeepSpeed, not faster hardware, shortens them).
#pragma once

#include <string>

#include "sim/parallel/step_model.h"

namespace clustersim {

std::string limiting_part(const StepResult& r);

}  // namespace clustersim
