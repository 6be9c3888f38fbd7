# Source: https://github.com/FedPruning/FedPruning/blob/35ced6d8e07b35ff91680bd02ce7cea2f03056b1/api/standalone/fedtinyclean/my_model_trainer_classification.py
# Report: audited correct idiom: the FL client's test() runs under torch.no_grad() and folds loss.item() * batch into a metrics dict
# Shape: the same metrics dict outlives the loop, but each batch is evaluated under no_grad and only Python numbers (.item()) are added to it
# Expect: near-miss: must be silent
import logging

import torch
from torch import nn


class ModelTrainer:
    def __init__(self, model, args=None):
        self.model = model
        self.id = 0
        self.args = args


class MyModelTrainer(ModelTrainer):

    def get_model_params(self):
        return self.model.cpu().state_dict()

    def set_model_params(self, model_parameters):
        self.model.load_state_dict(model_parameters, strict=False)

    def train(self, train_data, device, args):
        model = self.model
        model.to(device)
        model.train()
        criterion = nn.CrossEntropyLoss().to(device)
        optimizer = torch.optim.SGD(filter(lambda p: p.requires_grad, model.parameters()), lr=args.lr)
        epoch_loss = []
        for epoch in range(args.epochs):
            batch_loss = []
            for batch_idx, (x, labels) in enumerate(train_data):
                x, labels = x.to(device), labels.to(device)
                model.zero_grad()
                log_probs = model(x)
                loss = criterion(log_probs, labels)
                loss.backward()
                optimizer.step()
                batch_loss.append(loss.item())
            epoch_loss.append(sum(batch_loss) / len(batch_loss))
            logging.info("Client Index = %d\tEpoch: %d\tLoss: %.6f", self.id, epoch, epoch_loss[-1])

    def test(self, test_data, device, args):
        model = self.model
        model.to(device)
        model.eval()

        metrics = {"test_correct": 0, "test_loss": 0, "test_total": 0}
        criterion = nn.CrossEntropyLoss().to(device)

        with torch.no_grad():
            for batch_idx, (x, target) in enumerate(test_data):
                x = x.to(device)
                target = target.to(device)
                pred = model(x)
                loss = criterion(pred, target)

                _, predicted = torch.max(pred, -1)
                correct = predicted.eq(target).sum()
                metrics["test_correct"] += correct.item()
                metrics["test_loss"] += loss.item() * target.size(0)
                metrics["test_total"] += target.size(0)
        return metrics

    def test_on_the_server(self, train_data_local_dict, test_data_local_dict, device, args=None):
        return False
