# Source: https://github.com/choderalab/pinot/issues/23
# Report: a hyper-parameter sweep over TrainAndTest experiments takes far more memory than the saved state dicts explain; the returned `result` carries metric tensors with their computation graph instead of plain numbers.
# Shape: TrainAndTest.run() returns a dict of metric tensors computed on the test graph; the sweep driver appends every returned dict to a list that lives for the whole sweep.
# Expect: TML001 line 38; TML001 line 56; TML003 line 38
import copy

import torch


def rmse(model, g, y):
    y_hat = model(g)
    return torch.sqrt(torch.nn.functional.mse_loss(y_hat, y))


class TrainAndTest:
    def __init__(self, net, optimizer, data_tr, data_te, n_epochs=100):
        self.net = net
        self.optimizer = optimizer
        self.data_tr = data_tr
        self.data_te = data_te
        self.n_epochs = n_epochs
        self.states = {}

    def train(self):
        for epoch in range(self.n_epochs):
            for g, y in self.data_tr:
                self.optimizer.zero_grad()
                loss = self.net.loss(g, y).sum()
                loss.backward()
                self.optimizer.step()
            self.states[epoch] = copy.deepcopy(self.net.state_dict())

    def test(self):
        g, y = self.data_te
        results = {}
        for epoch, state in self.states.items():
            self.net.load_state_dict(state)
            results[epoch] = rmse(self.net, g, y)  # expect: TML001, TML003
        return results

    def run(self):
        self.train()
        return {"rmse": self.test()}


class MultipleTrainAndTest:
    def __init__(self, experiment_generating_fn, param_dicts):
        self.experiment_generating_fn = experiment_generating_fn
        self.param_dicts = param_dicts

    def run(self):
        results = []
        for param_dict in self.param_dicts:
            train_and_test = self.experiment_generating_fn(param_dict)
            result = train_and_test.run()
            results.append((param_dict, result))  # expect: TML001
            del train_and_test
        return results
