"""Figures from schedules and sweep rows; one module per kind of figure.

Every function draws on a matplotlib ``Axes`` (a new figure when none is given) and returns the
``Figure``, with axis labels in the model's units (rounds, tokens), a title and a legend. No
module here selects a backend or runs an experiment: the reproductions
(:mod:`lpsched.research.reproductions`) call these functions on their rows.
"""

from .bars import plot_grouped_bars
from .curves import plot_curves, plot_panels
from .families import plot_families
from .ratios import plot_ratio_distribution, plot_search_history
from .schedule import (
    batch_labels,
    plot_gantt,
    plot_memory,
    plot_rounds,
    plot_schedule,
    request_classes,
    save_schedule_plot,
)
from .style import POLICY_COLORS, save_figure

__all__ = [
    "POLICY_COLORS",
    "plot_gantt",
    "plot_memory",
    "plot_schedule",
    "plot_rounds",
    "save_schedule_plot",
    "request_classes",
    "batch_labels",
    "plot_ratio_distribution",
    "plot_search_history",
    "plot_families",
    "plot_grouped_bars",
    "plot_curves",
    "plot_panels",
    "save_figure",
]
