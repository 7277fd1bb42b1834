"""Metrics of the paired MirrorCraft study (pure functions, no I/O; paper Sections 3.4-3.6,
4.1, Appendix C/D), one flat API over the modules:

* :mod:`.score` -- Score / SR, checkpoint SR, mean actions and cost (unpaired);
* :mod:`.rie` -- RIE_SC / RIE_SR paired by comparison, and their stratified intervals;
* :mod:`.milestones` -- MSR / TSR beside Score / SR, and RIE_MSR paired by comparison;
* :mod:`.disclosure` -- ReAct's RIE split into Gap and DeltaS, with intervals;
* :mod:`.behavior` -- IRR / RL after rule encounters;
* :mod:`.heterogeneity` -- Cochran's Q across configurations or suites;
* :mod:`.checks` -- records checked against the study plan.

Result dictionaries are keyed by a tuple of the ``by`` field values (``()``
when ``by`` is empty).  A cell with fewer than the minimum number of episodes /
pairs / encounters maps to ``None`` instead of a number.
"""
from .behavior import Behavior, behavior
from .checks import CHECKED_FIELDS, Exclusion, check_records, missing_episodes
from .disclosure import DisclosureSplit, disclosure_split, disclosure_split_intervals
from .heterogeneity import (
    Heterogeneity,
    compared_configurations,
    disclosure_heterogeneity,
    rie_sr_heterogeneity,
    within_suite_comparison,
)
from .milestones import MilestoneRates, MsrRIE, milestone_rates, rie_msr
from .rie import RIE, rie, rie_sc_interval, rie_sr_interval
from .score import ActionsCost, ScoreSR, checkpoint_sr, mean_actions_cost, score_sr

__all__ = [
    "CHECKED_FIELDS",
    "ScoreSR",
    "RIE",
    "DisclosureSplit",
    "Behavior",
    "ActionsCost",
    "Heterogeneity",
    "Exclusion",
    "score_sr",
    "MilestoneRates",
    "MsrRIE",
    "milestone_rates",
    "rie_msr",
    "rie",
    "rie_sr_interval",
    "rie_sc_interval",
    "disclosure_split",
    "disclosure_split_intervals",
    "behavior",
    "checkpoint_sr",
    "mean_actions_cost",
    "rie_sr_heterogeneity",
    "compared_configurations",
    "within_suite_comparison",
    "disclosure_heterogeneity",
    "check_records",
    "missing_episodes",
]
