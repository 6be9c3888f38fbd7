# Source: https://github.com/bjeffrey92/unitig_AMR_prediction/blob/master/GNN_model/GNN_model/hyperparameter_optimisation.py
# Report: graph NN predicting antimicrobial-resistance MICs from bacterial unitig graphs, tuned with BayesianOptimization: each trial trains 50 full-batch epochs and feeds every epoch's results to a MetricAccumulator; the repository's train() converts the loss with float() "to write it to file", this variant drops that line (one edit away)
# Shape: train() returns the graph-attached full-batch loss inside epoch_results; training_metrics.add stores it in a list that lives for the whole trial and metric_gradient keeps (loss[-1] - loss[0]) / n as a further attached tensor, so every epoch's loss graph of the trial stays reachable
# Expect: TML001 line 98
import torch
import torch.nn as nn
import torch.optim as optim
from bayes_opt import BayesianOptimization


def accuracy(predictions: torch.Tensor, labels: torch.Tensor) -> float:
    diff = abs(predictions - labels)
    correct = diff[[i < 1 for i in diff]]
    return len(correct) / len(predictions) * 100


class MetricAccumulator:
    def __init__(self, gradient_batch=10):
        self.training_data_loss, self.training_data_acc = [], []
        self.testing_data_loss, self.testing_data_acc = [], []
        self.training_data_loss_grads, self.testing_data_acc_grads = [], []
        self.gradient_batch = gradient_batch

    def add(self, epoch_results):
        self.training_data_loss.append(epoch_results[0])
        self.training_data_acc.append(epoch_results[1])
        self.testing_data_loss.append(epoch_results[2])
        self.testing_data_acc.append(epoch_results[3])
        self.training_data_loss_grads.append(self.metric_gradient(self.training_data_loss))
        self.testing_data_acc_grads.append(self.metric_gradient(self.testing_data_acc))

    def metric_gradient(self, x: list):
        data = x[-self.gradient_batch:]
        return round((data[-1] - data[0]) / len(data), 2)


class GraphConnectionsNN(nn.Module):
    def __init__(self, distances, n_hid_1, n_hid_2, out_dim, dropout):
        super().__init__()
        self.register_buffer("distances", distances)
        n_nodes = distances.shape[0]
        self.fc1 = nn.Linear(n_nodes, n_hid_1)
        self.fc2 = nn.Linear(n_hid_1, n_hid_2)
        self.out = nn.Linear(n_hid_2, out_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, features):
        x = torch.relu(self.fc1((self.distances @ features).squeeze(-1)))
        x = self.dropout(torch.relu(self.fc2(x)))
        return torch.relu(self.out(x))


def epoch_(model, data):
    data.reset_generator()
    outputs = [None] * data.n_samples
    for i in range(data.n_samples):
        features = data.next_sample()[0]
        outputs[i] = model(features)
    return torch.cat(outputs, dim=0)


def train(data, model, optimizer, epoch, loss_function, accuracy, testing_data=None):
    model.train()
    optimizer.zero_grad()
    output = epoch_(model, data)
    loss_train = loss_function(output, data.labels)
    acc_train = accuracy(output, data.labels)
    if testing_data:
        loss_test, acc_test = test(testing_data, model, loss_function, accuracy)
    else:
        loss_test, acc_test = "N/A", "N/A"
    loss_train.backward()
    optimizer.step()
    return model, (loss_train, acc_train, loss_test, acc_test)


def test(data, model, loss_function, accuracy):
    data.reset_generator()
    model.train(False)
    with torch.no_grad():
        output = epoch_(model, data)
        loss = float(loss_function(output, data.labels))
        acc = accuracy(output, data.labels)
    return loss, acc


def make_objective(training_data, testing_data, distances):
    def train_evaluate(dropout, l2_alpha, lr, n_hid_1, n_hid_2):
        torch.manual_seed(0)
        model = GraphConnectionsNN(distances=distances, n_hid_1=int(n_hid_1),
                                   n_hid_2=int(n_hid_2), out_dim=1, dropout=dropout)
        optimizer = optim.Adam(model.parameters(), lr=lr, weight_decay=l2_alpha)
        loss_function = nn.MSELoss()
        training_metrics = MetricAccumulator()
        for epoch in range(1, 51):
            model, epoch_results = train(training_data, model, optimizer, epoch,
                                         loss_function, accuracy, testing_data=testing_data)
            training_metrics.add(epoch_results)  # expect: TML001
            plateaued = [g for g in training_metrics.testing_data_acc_grads[-10:] if g < 0.1]
            if len(plateaued) >= 10 and epoch > 30:
                break
        # average testing loss over the last five epochs is the objective
        return sum(training_metrics.testing_data_loss[-5:]) / 5
    return train_evaluate


def run(training_data, testing_data, distances):
    pbounds = {"dropout": (0.2, 0.7), "l2_alpha": (1e-4, 1e-3), "lr": (1e-5, 5e-4),
               "n_hid_1": (25, 100), "n_hid_2": (10, 50)}
    bo = BayesianOptimization(f=make_objective(training_data, testing_data, distances),
                              pbounds=pbounds, random_state=1)
    bo.maximize(n_iter=2)
    return bo.max
