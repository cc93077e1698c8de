"""The boundary of a suite: condition spaces, regions and colours per point, where to run next,
what production found, and case kinds.

>>> from fluke.boundary import Space, chart
>>> space = Space.from_mapping({"axes": {"case": ["unique", "same_name"]}})
>>> chart(space, [("s", {"case": "unique"}, "complete")] * 12, bar=0.8, floor=0.5, prob=0.9).region_counts()
{'works': 1, 'uncertain': 0, 'fails': 0, 'not run': 1}
"""

from ._chart import Chart, ChartPoint, Split, chart, counts_of
from ._explore import MEASURE, Exploration, even_split, expected_gain, plan_exploration, region_entropy
from ._incidents import COVERAGE_PRIOR, Incident, Incidents, Match, Period, coverage_interval, match_incidents, \
    point_text, read_incidents
from ._kinds import KINDS, KindRate, kind_of, kind_rates, mixed_warning
from ._regions import COLOURS, PRIOR, REGIONS, PointCounts, PointVerdict, check_thresholds, classify, regions_of
from ._space import Axis, Located, Point, Space, level_text, load_space

__all__ = [
    "COVERAGE_PRIOR", "Incident", "Incidents", "Match", "Period", "coverage_interval", "match_incidents",
    "point_text", "read_incidents", "KINDS", "KindRate", "kind_of", "kind_rates", "mixed_warning",
    "COLOURS", "MEASURE", "PRIOR", "REGIONS", "Axis", "Chart", "ChartPoint", "Exploration", "Located", "Point",
    "PointCounts", "Space", "Split", "PointVerdict", "chart", "check_thresholds", "classify", "counts_of", "even_split",
    "expected_gain", "level_text", "plan_exploration", "load_space", "region_entropy", "regions_of",
]
