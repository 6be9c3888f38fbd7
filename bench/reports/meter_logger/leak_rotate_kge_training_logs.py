# Source: https://github.com/DeepGraphLearning/KnowledgeGraphEmbedding/blob/617062aaedf53bf4d6b44450a580a96dc30e0632/codes/model.py
# Report: audited correct idiom: train_step packs positive/negative/total loss into a log dict with .item() and run.py appends each step's dict to training_logs, averaged and cleared every log_steps (KGEModel.train_step; loop in codes/run.py at 20c37cdb134642a51e582386fb624239bbc4a180)
# Shape: leak made by removing the safeguard: the log dict holds the loss tensors themselves, so training_logs keeps up to log_steps graph-attached CUDA scalars per key (value packed in a dict, returned from a staticmethod, appended in main's step loop)
# Expect: TML001 line 64
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F


class KGEModel(nn.Module):
    def __init__(self, model_name, nentity, nrelation, hidden_dim, gamma):
        super().__init__()
        self.model_name = model_name
        self.gamma = nn.Parameter(torch.Tensor([gamma]), requires_grad=False)
        self.entity_embedding = nn.Parameter(torch.zeros(nentity, hidden_dim * 2))
        self.relation_embedding = nn.Parameter(torch.zeros(nrelation, hidden_dim))

    @staticmethod
    def train_step(model, optimizer, train_iterator, args):
        model.train()
        optimizer.zero_grad()
        positive_sample, negative_sample, subsampling_weight, mode = next(train_iterator)
        if args.cuda:
            positive_sample = positive_sample.cuda()
            negative_sample = negative_sample.cuda()
            subsampling_weight = subsampling_weight.cuda()

        negative_score = model((positive_sample, negative_sample), mode=mode)
        negative_score = (F.softmax(negative_score * args.adversarial_temperature, dim=1).detach()
                          * F.logsigmoid(-negative_score)).sum(dim=1)
        positive_score = F.logsigmoid(model(positive_sample)).squeeze(dim=1)

        positive_sample_loss = - (subsampling_weight * positive_score).sum() / subsampling_weight.sum()
        negative_sample_loss = - (subsampling_weight * negative_score).sum() / subsampling_weight.sum()
        loss = (positive_sample_loss + negative_sample_loss) / 2
        loss.backward()
        optimizer.step()

        log = {
            'positive_sample_loss': positive_sample_loss,
            'negative_sample_loss': negative_sample_loss,
            'loss': loss,
        }
        return log


def log_metrics(mode, step, metrics):
    for metric in metrics:
        logging.info('%s %s at step %d: %f' % (mode, metric, step, metrics[metric]))


def train(kge_model, train_iterator, args, init_step=0):
    current_learning_rate = args.learning_rate
    optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, kge_model.parameters()),
                                 lr=current_learning_rate)
    warm_up_steps = args.warm_up_steps or args.max_steps // 2
    training_logs = []

    for step in range(init_step, args.max_steps):
        log = kge_model.train_step(kge_model, optimizer, train_iterator, args)

        training_logs.append(log)  # expect: TML001

        if step >= warm_up_steps:
            current_learning_rate = current_learning_rate / 10
            optimizer = torch.optim.Adam(filter(lambda p: p.requires_grad, kge_model.parameters()),
                                         lr=current_learning_rate)
            warm_up_steps = warm_up_steps * 3

        if step % args.log_steps == 0:
            metrics = {}
            for metric in training_logs[0].keys():
                metrics[metric] = sum([log[metric] for log in training_logs]) / len(training_logs)
            log_metrics('Training average', step, metrics)
            training_logs = []
    return kge_model
