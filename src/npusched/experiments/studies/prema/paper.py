"""PREMA (HPCA 2020): the paper's numbers as data (the DNNs of Sec. III, the headline
values of Sec. IV-D and VI that ``report.md`` and the comparisons set ours against)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass


#: The eight DNNs of PREMA Sec. III (zoo names) and the paper's short names.
PREMA_NETWORKS: tuple[str, ...] = (
    "alexnet",
    "googlenet",
    "vgg-16",
    "mobilenet-v1",
    "rnn-sa",
    "rnn-mt1",
    "rnn-mt2",
    "rnn-asr",
)
SHORT = {
    "alexnet": "CNN-AN",
    "googlenet": "CNN-GN",
    "vgg-16": "CNN-VN",
    "mobilenet-v1": "CNN-MN",
    "rnn-sa": "RNN-SA",
    "rnn-mt1": "RNN-MT1",
    "rnn-mt2": "RNN-MT2",
    "rnn-asr": "RNN-ASR",
}

#: The paper's headline numbers (Sec. IV-D, VI) that ``report.md`` sets ours against.
PAPER: dict[str, float] = {
    "antt_improvement_prema_dynamic": 7.8,
    "fairness_improvement_prema_dynamic": 19.6,
    "stp_improvement_prema_dynamic": 1.4,
    "np_prema_antt_vs_sjf": 0.92,
    "predictor_mape_percent": 1.6,
    "sla_violation_prema_n4_max": 0.10,
    "sla_violation_np_fcfs": 0.36,
    "p95_high_np_fcfs_avg": 21.0,
    "p95_high_np_fcfs_max": 85.0,
    "p95_high_p_sjf_max": 2.6,
    "p95_high_prema_avg": 1.4,
    "p95_high_prema_max": 1.6,
    "checkpoint_latency_us_avg": 12.0,
    "checkpoint_latency_us_max": 59.0,
    "ntt_improvement_kill": 3.08,
    "ntt_improvement_checkpoint": 3.06,
    "drain_wait_ms_avg": 5.3,
    "oracle_fraction": 0.99,
}

#: The paper's range of isolated task latencies (Sec. IV-D: "0.5 to 45 msecs among the eight
#: DNNs"), seconds.
PAPER_JOB_RANGE_S: tuple[float, float] = (0.5e-3, 45e-3)
FAMILIES = ("RRB", "HPF", "TOKEN", "SJF", "PREMA")


HEADLINE_TEXT = {
    "antt_improvement_prema_dynamic": "ANTT improvement, P-PREMA (dynamic) vs NP-FCFS (x)",
    "fairness_improvement_prema_dynamic": "fairness improvement, P-PREMA (dynamic) vs NP-FCFS (x)",
    "stp_improvement_prema_dynamic": "STP improvement, P-PREMA (dynamic) vs NP-FCFS (x)",
    "np_prema_antt_vs_sjf": "NP-PREMA reaches this share of NP-SJF's ANTT (NP-SJF ANTT / NP-PREMA "
    "ANTT; 1 = as good as SJF)",
    "predictor_mape_percent": "predictor error, MAPE over all requests (%)",
    "sla_violation_prema_n4_max": "SLA violation rate at N=4, P-PREMA (dynamic)",
    "sla_violation_np_fcfs": "SLA violation rate at N=4, NP-FCFS",
    "p95_high_np_fcfs_avg": "p95 high-priority latency / isolated, NP-FCFS, mean over DNNs",
    "p95_high_np_fcfs_max": "p95 high-priority latency / isolated, NP-FCFS, worst DNN",
    "p95_high_p_sjf_max": "p95 high-priority latency / isolated, P-SJF (dynamic), worst DNN",
    "p95_high_prema_avg": "p95 high-priority latency / isolated, P-PREMA (dynamic), mean",
    "p95_high_prema_max": "p95 high-priority latency / isolated, P-PREMA (dynamic), worst",
    "checkpoint_latency_us_avg": "CHECKPOINT preemption latency, mean (us)",
    "checkpoint_latency_us_max": "CHECKPOINT preemption latency, max (us)",
    "ntt_improvement_kill": "preempting task's NTT improvement with KILL (x)",
    "ntt_improvement_checkpoint": "preempting task's NTT improvement with CHECKPOINT (x)",
    "drain_wait_ms_avg": "preempting task's wait under DRAIN, mean (ms)",
    "oracle_fraction": "P-PREMA (dynamic) ANTT as a fraction of the oracle's",
}
