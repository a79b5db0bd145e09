#!/usr/bin/env python3
"""Writes scenarios/validation/*.textproto from the reference data's published training runs.

Usage: tools/make_validation_scenarios.py REFERENCE_DATA_VALIDATION_DIR

One scenario per row of megatron_sc21.csv (Tables 1 and 2) and of megatron_readme.csv (the
Megatron-Core H100 table and the January-2021 scaling tables), each with its published figure. Unknowns are set by one rule per table, never
per row (see the comments written into each file). Run it again after the reference data changes.
"""
import csv
import os
import sys

SC21_MODELS = {'1.7': 'gpt-1.7b', '3.6': 'gpt-3.6b', '7.5': 'gpt-7.5b', '18.4': 'gpt-18b',
               '39.1': 'gpt-39b', '76.1': 'gpt-76b', '145.6': 'gpt-145b', '310.1': 'gpt-310b',
               '529.6': 'gpt-530b', '1008.0': 'gpt-1t'}

SC21_RULES = """# Unknowns, one rule for every row of Tables 1 and 2 (the paper does not give them):
#   micro-batch size 1 (Table 2 gives it); interleaved 1F1B with 2 model chunks per stage where the layers divide
#   evenly (else plain 1F1B); full activation recomputation (the paper's FLOPs count it); fp16;
#   unfused attention (2021, before FlashAttention); gradients reduced after the pipeline flush;
#   blocking stage-to-stage sends; no sequence parallelism and no distributed optimizer (both
#   came later)."""

MCORE_RULES = """# Unknowns, one rule for every row of the table (the README gives none of them):
#   BF16; fused attention; no recomputation (every row fits without); sequence parallelism
#   wherever tensor parallel > 1; the distributed optimizer, its gradient reduce-scatter and
#   parameter all-gather overlapped with compute (the README's --overlap-grad-reduce and
#   --overlap-param-gather); tensor-parallel communication overlapped with the GEMMs wherever
#   tensor parallel > 1 (--tp-comm-overlap). The layout the README leaves out is the one the runs
#   were tuned to: the sweep below lists every micro-batch size dividing a replica's batch and,
#   wherever pipeline parallel > 1, plain 1F1B and interleaved 1F1B with every number of model
#   chunks that divides a stage's layers (the schedules Megatron-Core offers), and
#   `clustersim validate` compares the fastest that fits in GPU memory."""


README_2021_RULES = """# Unknowns, one rule for every row of the January-2021 tables (images/tables.tex gives shape,
#   GPUs, parallelism, batch, step time and TFLOP/s): sequence 1024 and vocabulary 51200 (the
#   models' file); fp16 with full activation recomputation (Megatron-LM's 2020 defaults, and the
#   published TFLOP/s are the step times under Megatron's count with recomputation); unfused
#   attention; gradients all-reduced after the backward (no overlap yet); the runs use the first
#   GPUs of one node (model parallel) or every GPU of their DGX A100 nodes (model + data
#   parallel; node and fabric as SC'21's Selene, 80 GB: the tables do not say which); the
#   micro-batch size is the one the runs were tuned to: every divisor of a replica's batch is
#   listed below and `clustersim validate` compares the fastest that fits."""


SC21_ZERO3_RULES = """# ZeRO-3 rows, one rule for all (Sec. 5.2: DeepSpeed's ZeRO-3 integrated into Megatron-LM, no
#   tensor or pipeline parallelism): every GPU runs one micro-batch per step (batch = GPUs x
#   micro-batch in every row, so no gradient accumulation); DeepSpeed's ZeRO-3 defaults (prefetch
#   bucket 5e7 parameters, reuse distance 1e9, reduce bucket 5e8; the run's config is not
#   published): each layer's weights are all-gathered before its forward, its recomputed forward
#   and (being larger than the reuse distance) again before its backward, and its gradients are
#   reduce-scattered in fp16 during the backward; collectives as NCCL's ring over all GPUs.
#   DeepSpeed of early 2021 (the paper appeared in April 2021; ZeRO-3 was released in March, and
#   its gathers were made asynchronous only in June, PR #1188): zero3_synchronous_fetch."""


SC21_TABLE2_MODELS = {'174.6': 'gpt-175b', '529.6': 'gpt-530b'}


def published(group, tflops, convention, source, step_time_s=None):
    """The `published` block of a scenario."""
    step = f'\n  step_time_s: {step_time_s}' if step_time_s else ''
    return (f'published {{\n  group: "{group}"{step}\n  tflops_per_gpu: {tflops}\n'
            f'  flops_convention: {convention}\n  source: "{source}"\n}}\n')


def write_scenario(out, name, text):
    with open(os.path.join(out, name + '.textproto'), 'w') as f:
        f.write(text)


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def sc21(rows, out):
    for r in rows:
        if r['table'] not in ('Table 1', 'Table 2'):
            continue
        table2 = r['table'] == 'Table 2'
        zero3 = table2 and r['scheme'].startswith('ZeRO-3')
        model = (SC21_TABLE2_MODELS if table2 else SC21_MODELS)[r['params_billion']]
        tp, pp, gpus = int(r['tp']), int(r['pp']), int(r['num_gpus'])
        layers = int(r['num_layers'])
        chunks = 2 if pp > 1 and layers % (2 * pp) == 0 else 1
        schedule = 'INTERLEAVED_ONE_F_ONE_B' if chunks > 1 else 'ONE_F_ONE_B'
        micro_batch = r['micro_batch_size'] or '1'
        table = 'table2' if table2 else 'table1'
        scheme = 'zero3' if zero3 else 'ptd'
        name = (f'sc21-table2-{scheme}-{model}-{gpus}' if table2 else f'sc21-table1-{model}')
        zero_line = '\n  zero_stage: 3\n  zero3_synchronous_fetch: true' if zero3 else ''
        zero3_rules = '\n' + SC21_ZERO3_RULES if zero3 else ''
        group = ("Megatron SC'21 Table 2 ZeRO-3 (A100)" if zero3 else
                 "Megatron SC'21 Table 2 PTD-P (A100)" if table2 else "Megatron SC'21 Table 1 (A100)")
        text = f"""# Megatron-LM SC'21 {r['table']} ({r['scheme']}): {r['params_billion']}B parameters on {gpus} A100 GPUs.
# Generated by tools/make_validation_scenarios.py from the reference data's megatron_sc21.csv.
{SC21_RULES}{zero3_rules}
name: "{name}"
model: "{model}"
job {{
  global_batch_size: {r['global_batch_size']}
  sequence_length: {r['seq_len']}
  precision: FP16
  optimizer: ADAM
  steps: 1
  flash_attention: false
}}
cluster {{ instance: "onprem.dgx-a100-80gb" nodes: {gpus // 8} fabric: "ib-rail-optimized" }}
parallelism {{
  tensor_parallel: {tp}
  pipeline_parallel: {pp}
  micro_batch_size: {micro_batch}
  schedule: {schedule}
  virtual_stages: {chunks}{zero_line}
  recompute: RECOMPUTE_FULL
  overlap_gradient_reduce: false
  overlap_pipeline_communication: false
}}
""" + published(group, r['achieved_tflops_per_gpu'], 'WITH_FULL_RECOMPUTE',
                  f"Narayanan et al., SC'21 (arXiv:2104.04473), {r['table']}; step time derived "
                  'from its TFLOP/s', r['derived_iteration_time_s'])
        write_scenario(out, name, text)


def mcore(rows, out):
    for r in rows:
        if not r['run_group'].startswith('Megatron-Core r0.8.0 H100'):
            continue
        size = r['model'].split()[-1].lower()
        model = f'mcore-gpt-{size}'
        tp, pp, gpus = int(r['tp']), int(r['pp']), int(r['num_gpus'])
        sp = 'true' if tp > 1 else 'false'
        overlap_line = '\n  overlap_tensor_communication: true' if tp > 1 else ''
        replica_batch = int(r['global_batch_size']) // (gpus // (tp * pp))
        micro_batches = ', '.join(str(b) for b in divisors(replica_batch))
        sweep = f'micro_batch_size: [{micro_batches}]'
        if pp > 1:
            chunks = ', '.join(str(v) for v in divisors(int(r['num_layers']) // pp))
            sweep += (f'\n  schedule: [ONE_F_ONE_B, INTERLEAVED_ONE_F_ONE_B]'
                      f'\n  virtual_stages: [{chunks}]')
        name = f'mcore-h100-gpt-{size}'
        text = f"""# Megatron-Core r0.8.0 H100 weak scaling: {r['model']} on {gpus} H100 GPUs.
# Generated by tools/make_validation_scenarios.py from the reference data's megatron_readme.csv.
{MCORE_RULES}
name: "{name}"
model: "{model}"
job {{
  global_batch_size: {r['global_batch_size']}
  sequence_length: {r['seq_len']}
  precision: BF16
  optimizer: ADAM
  steps: 1
}}
cluster {{ instance: "onprem.dgx-h100" nodes: {gpus // 8} fabric: "ib-rail-optimized" }}
parallelism {{
  tensor_parallel: {tp}
  pipeline_parallel: {pp}
  sequence_parallel: {sp}
  distributed_optimizer: true{overlap_line}
}}
sweep {{
  {sweep}
}}
""" + published('Megatron-Core H100 weak scaling', r['tflops_per_gpu'], 'MODEL_FLOPS',
                  'NVIDIA/Megatron-LM README (Megatron-Core r0.8.0 weak scaling), MFU '
                  f"{r['mfu_pct']}%")
        write_scenario(out, name, text)


def readme_2021(rows, out):
    for r in rows:
        if not r['run_group'].startswith('Megatron-LM README Jan-2021'):
            continue
        size = r['model'].split()[-1].lower()
        gpu = 'v100' if r['gpu'].startswith('V100') else 'a100'
        tp, gpus, dp = int(r['tp']), int(r['num_gpus']), int(r['dp'])
        with_data = dp > 1
        name = f'readme2021-{gpu}-gpt-{size}' + (f'-{gpus}' if with_data else '')
        if gpu == 'v100':
            cluster = f'instance: "onprem.dgx-2" nodes: 1 gpus_per_node: {gpus}'
        elif with_data:
            cluster = f'instance: "onprem.dgx-a100-80gb" nodes: {gpus // 8} fabric: "ib-rail-optimized"'
        else:
            cluster = f'instance: "onprem.dgx-a100-80gb" nodes: 1 gpus_per_node: {gpus}'
        kind = 'model + data parallel' if with_data else 'model parallel'
        group = f'Megatron-LM README Jan-2021 {kind} ({gpu.upper()})'
        replica_batch = int(r['global_batch_size']) // dp
        micro_batches = ', '.join(str(b) for b in divisors(replica_batch))
        text = f"""# Megatron-LM README, January 2021 ({r['run_group'].split('Jan-2021 ')[1]}): {r['model']} on {gpus} {r['gpu']}.
# Generated by tools/make_validation_scenarios.py from the reference data's megatron_readme.csv.
{README_2021_RULES}
name: "{name}"
model: "gpt-2021-{size}"
job {{
  global_batch_size: {r['global_batch_size']}
  sequence_length: 1024
  precision: FP16
  optimizer: ADAM
  steps: 1
  flash_attention: false
}}
cluster {{ {cluster} }}
parallelism {{
  tensor_parallel: {tp}
  recompute: RECOMPUTE_FULL
  overlap_gradient_reduce: false
}}
sweep {{
  micro_batch_size: [{micro_batches}]
}}
""" + published(group, r['tflops_per_gpu'], 'WITH_FULL_RECOMPUTE',
                  'NVIDIA/Megatron-LM images/tables.tex (README training-speed tables, January '
                  '2021)', r['step_time_s'])
        write_scenario(out, name, text)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    data = sys.argv[1]
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'scenarios', 'validation')
    os.makedirs(out, exist_ok=True)
    sc21(list(csv.DictReader(open(os.path.join(data, 'megatron_sc21.csv')))), out)
    readme_rows = list(csv.DictReader(open(os.path.join(data, 'megatron_readme.csv'))))
    mcore(readme_rows, out)
    readme_2021(readme_rows, out)


if __name__ == '__main__':
    main()
