"""The text classifiers of Büttcher et al. (2007, §3): KLD against the relevant-document language model, and
a linear SVM on TF-IDF vectors — each trained per topic on the remaining judgments and thresholded so that
precision equals recall on the training data (the number predicted relevant ≈ the number relevant).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp

from bayeval.bias.completion import CandidatePrediction
from bayeval.data.rankdata import RankData
from bayeval.errors import BayevalInputError

__all__ = ["CLASSIFIERS", "TextClassifierPredictor", "kld_scores", "threshold_at_count"]

CLASSIFIERS = ("kld", "svm")


def threshold_at_count(scores: np.ndarray, n_positive: int) -> float:
    """A threshold with exactly ``n_positive`` of ``scores`` above it (midpoint between neighbours).

    Ties at the boundary keep fewer above. ``n_positive = 0`` gives +inf, ``n_positive = len`` −inf.

    Examples
    --------
    >>> threshold_at_count(np.array([0.1, 0.9, 0.5, 0.3]), 2)
    0.4
    """
    s = np.sort(np.asarray(scores, dtype=np.float64))[::-1]
    if n_positive <= 0:
        return np.inf
    if n_positive >= len(s):
        return -np.inf
    return float((s[n_positive - 1] + s[n_positive]) / 2.0)


def kld_scores(counts: sp.csr_matrix, relevant_rows: np.ndarray, collection: np.ndarray, lam: float = 0.2,
               source: sp.csr_matrix | None = None) -> np.ndarray:
    r"""KLD(M_D, M_R) of every row's language model against the relevant documents' model.

    Both unigram models are interpolated with the collection model :math:`P_C`,
    :math:`P_D(x) = (1-\lambda)\,c_{D}(x)/|D| + \lambda P_C(x)` and likewise :math:`P_R` from the
    concatenated relevant documents, and

    .. math:: \mathrm{KLD}(M_D, M_R) = \sum_x P_D(x) \log\frac{P_D(x)}{P_R(x)}

    over the whole vocabulary, computed sparsely: :math:`A + \sum_{x \in D}[P_D(x)\log\frac{P_D(x)}{P_R(x)} -
    \lambda P_C(x)\log\frac{\lambda P_C(x)}{P_R(x)}]` with :math:`A = \sum_x \lambda P_C(x)
    \log\frac{\lambda P_C(x)}{P_R(x)}`.

    Parameters
    ----------
    counts : scipy.sparse matrix, shape (n, V)
        Term counts of the documents to score.
    relevant_rows : ndarray of int
        Rows of ``counts`` that are the judged relevant documents (at least one).
    collection : ndarray, shape (V,)
        Collection model :math:`P_C` (positive, sums to 1).
    lam : float
        Weight of the collection model (the paper's λ = 0.2).
    source : scipy.sparse matrix, optional
        Where ``relevant_rows`` index (default ``counts`` itself).

    References
    ----------
    .. [1] S. Büttcher, C. L. A. Clarke, P. C. K. Yeung, I. Soboroff, "Reliable information retrieval
       evaluation with incomplete and biased judgements", SIGIR 2007, §3.1.

    Examples
    --------
    A document equal to the relevant model has divergence 0.

    >>> c = sp.csr_matrix(np.array([[2.0, 1.0, 0.0], [0.0, 1.0, 3.0]]))
    >>> k = kld_scores(c, np.array([0]), np.array([0.4, 0.3, 0.3]))
    >>> round(float(k[0]), 12), bool(k[1] > 0)
    (0.0, True)
    """
    counts = sp.csr_matrix(counts, dtype=np.float64)
    if not 0.0 < lam < 1.0:
        raise BayevalInputError(f"lam: the collection weight must lie in (0, 1), got {lam!r}")
    if len(relevant_rows) == 0:
        raise BayevalInputError("relevant_rows: the relevant-document model needs at least one document")
    bg = lam * np.asarray(collection, dtype=np.float64)
    source = counts if source is None else sp.csr_matrix(source, dtype=np.float64)
    rel = np.asarray(source[relevant_rows].sum(axis=0)).ravel()
    log_pr = np.log((1.0 - lam) * rel / rel.sum() + bg)
    log_bg = np.log(bg)
    base = float(np.sum(bg * (log_bg - log_pr)))
    lengths = np.asarray(counts.sum(axis=1)).ravel()
    out = np.full(counts.shape[0], base)
    for i in range(counts.shape[0]):
        lo, hi = counts.indptr[i], counts.indptr[i + 1]
        if hi == lo:
            continue
        x = counts.indices[lo:hi]
        pd_ = (1.0 - lam) * counts.data[lo:hi] / lengths[i] + bg[x]
        out[i] += float(np.sum(pd_ * (np.log(pd_) - log_pr[x]) - bg[x] * (log_bg[x] - log_pr[x])))
    return out


class TextClassifierPredictor:
    r"""Predict unjudged documents from their texts with the paper's KLD or SVM classifier.

    Per topic, the judged documents (reduced qrels) are the training data; the threshold makes the
    number of training documents predicted relevant equal the number judged relevant (precision =
    recall on the training data). The training scores are out-of-sample, so that the threshold is not
    set on documents the classifier has memorised: for the SVM, cross-validated decision values
    (5-fold, stratified, seeded; in-sample when a class has fewer than 2 documents); for KLD, each
    relevant training document is scored against the model of the other relevant documents
    (leave-one-out; in-sample the relevant documents sit too close to their own model and the threshold
    admits almost no unjudged document — measured on Cranfield, docs/bias.md).

    Parameters
    ----------
    texts : mapping docno → str
        Texts of every judged and candidate document (the collection model uses all of them).
    classifier : {"kld", "svm"}
    lam : float
        Collection weight of the KLD language models (paper: 0.2).
    max_features : int
        Vocabulary: the most frequent terms (paper: 10⁶).
    seed : int
        Seed of the SVM and of the cross-validation folds.
    name : str, optional
        Label in result tables (default the classifier).

    Notes
    -----
    SVM features (paper §3.2): :math:`v_i = f_{T_i,D}\log(|\mathcal D|/|\mathcal D_{T_i}|)`, L1-normalised;
    scikit-learn's ``LinearSVC`` with the hinge loss and SVMlight's default
    :math:`C = 1/\overline{\lVert x\rVert^2}` over the training vectors.

    Examples
    --------
    >>> texts = {"a": "wing flutter", "b": "wing flutter speed", "c": "soil moisture", "d": "wing speed"}
    >>> import pandas as pd
    >>> from bayeval.data import Qrels, Run
    >>> q = Qrels.from_frame(pd.DataFrame({"topic": ["1"] * 3, "docno": ["a", "b", "c"], "grade": [1, 1, 0]}))
    >>> run = Run.from_frame(pd.DataFrame({"topic": "1", "docno": list("abcd"), "score": [4, 3, 2, 1]}), "r")
    >>> data = RankData.build([run], q)
    >>> pred = TextClassifierPredictor(texts, "kld").predict(data, {"1": np.array(["d"], dtype=object)})
    >>> bool(pred["1"].relevant[0])
    True
    """

    def __init__(self, texts: Mapping[str, str], classifier: str = "svm", *, lam: float = 0.2,
                 max_features: int = 1_000_000, seed: int = 0, name: str | None = None) -> None:
        if classifier not in CLASSIFIERS:
            raise BayevalInputError(f"classifier: must be one of {CLASSIFIERS}, got {classifier!r}")
        if not isinstance(texts, Mapping) or not texts:
            raise BayevalInputError("texts: expected a non-empty mapping docno -> text")
        if not 0.0 < lam < 1.0:
            raise BayevalInputError(f"lam: the collection weight must lie in (0, 1), got {lam!r}")
        from sklearn.feature_extraction.text import CountVectorizer

        self.classifier = classifier
        self.name = name or classifier
        self.lam = float(lam)
        self.seed = int(seed)
        self._row = {str(d): i for i, d in enumerate(texts)}
        vec = CountVectorizer(max_features=max_features, dtype=np.float64)
        self._counts = sp.csr_matrix(vec.fit_transform([str(t) for t in texts.values()]))
        total = np.asarray(self._counts.sum(axis=0)).ravel()
        self._collection = total / total.sum()
        df = np.asarray((self._counts > 0).sum(axis=0)).ravel()
        self._idf = np.log(self._counts.shape[0] / np.maximum(df, 1))

    def _rows(self, docnos: np.ndarray, topic: str, what: str) -> np.ndarray:
        try:
            return np.array([self._row[str(d)] for d in docnos], dtype=np.int64)
        except KeyError as exc:
            raise BayevalInputError(f"texts: no text for {what} document {exc.args[0]!r} of topic {topic!r}") from None

    def _tfidf(self, rows: np.ndarray) -> sp.csr_matrix:
        x = sp.csr_matrix(self._counts[rows].multiply(self._idf[None, :]))
        norm = np.asarray(abs(x).sum(axis=1)).ravel()
        return sp.csr_matrix(sp.diags(1.0 / np.where(norm > 0, norm, 1.0)) @ x)

    def _svm(self, train: np.ndarray, y: np.ndarray, test: np.ndarray) -> np.ndarray:
        from sklearn.model_selection import StratifiedKFold, cross_val_predict
        from sklearn.svm import LinearSVC

        xtr, xte = self._tfidf(train), self._tfidf(test)
        sq = np.asarray(xtr.multiply(xtr).sum(axis=1)).ravel()
        c = 1.0 / max(float(sq.mean()), 1e-12)

        def model():
            return LinearSVC(C=c, loss="hinge", dual=True, max_iter=20000, random_state=self.seed)

        n_min = int(min(y.sum(), (~y).sum()))
        if n_min >= 2:
            folds = StratifiedKFold(min(5, n_min), shuffle=True, random_state=self.seed)
            train_scores = cross_val_predict(model(), xtr, y, cv=folds, method="decision_function")
        else:
            train_scores = None
        fitted = model().fit(xtr, y)
        if train_scores is None:
            train_scores = fitted.decision_function(xtr)
        theta = threshold_at_count(train_scores, int(y.sum()))
        return fitted.decision_function(xte) > theta if len(test) else np.zeros(0, dtype=bool)

    def _kld(self, train: np.ndarray, y: np.ndarray, test: np.ndarray) -> np.ndarray:
        rows = np.concatenate([train, test])
        counts = self._counts[rows]
        rel = np.flatnonzero(y)
        k = kld_scores(counts, rel, self._collection, self.lam)
        train_scores = k[: len(train)].copy()
        if len(rel) >= 2:  # a relevant training document is scored against the model of the *other* ones
            for i in rel:
                train_scores[i] = kld_scores(counts[[i]], rel[rel != i], self._collection, self.lam,
                                             source=counts)[0]
        theta = threshold_at_count(-train_scores, int(y.sum()))
        return -k[len(train):] > theta

    def predict(self, data: RankData, candidates: Mapping[str, np.ndarray]) -> dict[str, CandidatePrediction]:
        """Hard predictions for the candidates of every topic of ``data`` (trained on its judgments)."""
        out = {}
        for tr in data:
            docs = np.asarray(candidates.get(tr.topic, ()), dtype=object)
            judged = np.flatnonzero(tr.judged)
            y = tr.relevant[judged]
            if len(docs) == 0 or not y.any():
                out[tr.topic] = CandidatePrediction(docs, np.zeros(len(docs), dtype=bool))
                continue
            train = self._rows(tr.docnos[judged], tr.topic, "judged")
            test = self._rows(docs, tr.topic, "candidate")
            if y.all():
                rel = np.ones(len(docs), dtype=bool)
            elif self.classifier == "svm":
                rel = self._svm(train, y, test)
            else:
                rel = self._kld(train, y, test)
            out[tr.topic] = CandidatePrediction(docs, rel)
        return out

    def __repr__(self) -> str:
        return f"TextClassifierPredictor({self.classifier!r}, documents={self._counts.shape[0]})"
