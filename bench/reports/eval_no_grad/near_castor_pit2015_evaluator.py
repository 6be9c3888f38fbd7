# Source: https://github.com/castorini/castor/pull/181
# Report: PIT-2015 evaluator rewrite: get_scores() switched from self.model.eval() alone to running the dev loop under torch.no_grad(), which "will reduce memory usage and speed up computations"
# Shape: the merged version: get_scores() runs the whole dev loop under torch.no_grad(); labels and probabilities leave the GPU via .detach().cpu().numpy() before they are kept in lists
# Expect: near-miss: must be silent
import torch
import torch.nn.functional as F


class Evaluator(object):
    """Base class: holds the model, the dev/test iterator and the embedding lookup."""

    def __init__(self, dataset_cls, model, embedding, data_loader, batch_size, device, keep_results=False):
        self.dataset_cls = dataset_cls
        self.model = model
        self.embedding = embedding
        self.data_loader = data_loader
        self.batch_size = batch_size
        self.device = device
        self.keep_results = keep_results

    def get_sentence_embeddings(self, batch):
        sent1 = self.embedding(batch.sentence_1).transpose(1, 2)
        sent2 = self.embedding(batch.sentence_2).transpose(1, 2)
        return sent1, sent2

    def get_scores(self):
        raise NotImplementedError


def url_max_f1(probs, labels):
    labels = [item >= 1 for item in labels]
    order = sorted(range(len(probs)), key=probs.__getitem__, reverse=True)
    positives = sum(labels)
    truepos = falsepos = 0
    best = 0.0
    for i in order:
        if labels[i]:
            truepos += 1
        else:
            falsepos += 1
        precision = truepos / (truepos + falsepos)
        recall = truepos / positives if positives else 0.0
        if precision + recall > 0:
            best = max(best, 2 * precision * recall / (precision + recall))
    accuracy = sum((p > 0.5) == l for p, l in zip(probs, labels)) / len(probs)
    return accuracy, best


class PIT2015Evaluator(Evaluator):

    def get_scores(self):
        test_loss = 0
        true_labels = []
        predictions = []

        with torch.no_grad():
            for batch in self.data_loader:
                sent1, sent2 = self.get_sentence_embeddings(batch)
                output = self.model(sent1, sent2, batch.ext_feats)
                test_loss += F.nll_loss(output, batch.label, reduction='sum').item()
                true_labels.extend(batch.label.detach().cpu().numpy())
                predictions.extend(output.detach().exp()[:, 1].cpu().numpy())
                del output

            test_loss /= len(batch.dataset.examples)
            accuracy, max_f1 = url_max_f1(predictions, true_labels)

        return [accuracy, test_loss, max_f1], ['accuracy', 'nll_loss', 'f1']


class Trainer(object):
    def __init__(self, model, optimizer, train_loader, embedding, dev_evaluator):
        self.model = model
        self.optimizer = optimizer
        self.train_loader = train_loader
        self.embedding = embedding
        self.dev_evaluator = dev_evaluator

    def train_epoch(self):
        self.model.train()
        for batch in self.train_loader:
            self.optimizer.zero_grad()
            sent1 = self.embedding(batch.sentence_1).transpose(1, 2)
            sent2 = self.embedding(batch.sentence_2).transpose(1, 2)
            output = self.model(sent1, sent2, batch.ext_feats)
            loss = F.nll_loss(output, batch.label)
            loss.backward()
            self.optimizer.step()

    def train(self, epochs):
        best_f1 = 0.0
        for epoch in range(1, epochs + 1):
            self.train_epoch()
            scores, names = self.dev_evaluator.get_scores()
            print('epoch {}: '.format(epoch) + ', '.join('{}={:.4f}'.format(n, s) for n, s in zip(names, scores)))
            best_f1 = max(best_f1, scores[-1])
        return best_f1
