"""HaX-CoNN (PPoPP'24) Sec. 5: moved to :mod:`npusched.experiments.studies.haxconn` (issue 29);
this name stays for ``npusched reproduce haxconn``'s callers."""

from npusched.experiments.studies.haxconn import PARTS, reproduce
from npusched.experiments.studies.haxconn.paper import (
    FIG5_NETS,
    FIG7_EXPS,
    TABLE6,
    TABLE8_NETS,
    Experiment,
)

__all__ = ["FIG5_NETS", "FIG7_EXPS", "PARTS", "TABLE6", "TABLE8_NETS", "Experiment", "reproduce"]
