"""Template filters of the alerting's pages and e-mails."""

from __future__ import annotations

from django import template

from wanmon.alerts.selectors import finding_facts

register = template.Library()


@register.filter
def subject_label(finding) -> str:
    """A finding's subject as people write it, in its direction: ``NDGF->CERN``, ``geant-fra:xe-1/0/0``,
    ``ral-lag``, ``ASGC/asgc-dt01`` (the grouping's label, which incident titles use too). Never the stored keys'
    order: the database keeps ``{"dst": "CERN", "src": "NDGF"}``."""
    return finding_facts(finding).label
