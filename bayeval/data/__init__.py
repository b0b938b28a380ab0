"""In-memory collections: runs, judgments, probabilities and the shared rank representation."""

from bayeval.data.labels import LABEL_KINDS, AssessorLabels
from bayeval.data.probabilities import RelevanceProbabilities
from bayeval.data.qrels import Qrels, TopicJudgments, pool_qrels
from bayeval.data.rankdata import RankData, TopicRanks
from bayeval.data.run import Run, RunSet
from bayeval.data.sample import StratifiedSample, TopicSample
from bayeval.data.topics import sort_topics

__all__ = [
    "LABEL_KINDS",
    "AssessorLabels",
    "Qrels",
    "RankData",
    "RelevanceProbabilities",
    "Run",
    "RunSet",
    "StratifiedSample",
    "TopicJudgments",
    "TopicRanks",
    "TopicSample",
    "pool_qrels",
    "sort_topics",
]
