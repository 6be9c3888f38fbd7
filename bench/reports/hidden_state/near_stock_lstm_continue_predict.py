# Source: https://github.com/hichenway/stock_predict_with_LSTM/blob/0b2c981f8cdbe8cdb9fb895a10a5da9691ceb730/model/model_pytorch.py
# Report: issue #5 asked why the final LSTM state was not fed to the next batch; the author's "continue training" mode carries hidden state across batches and detaches it in place (detach_) during training, but validation and predict() run with autograd on (source note: context: https://github.com/hichenway/stock_predict_with_LSTM/issues/5)
# Shape: no longer keeps the value: same forecaster with the in-place detach_ training loop unchanged, validation and predict() under torch.no_grad() (hidden still carried, but graph-free), and predictions collected in a list of .cpu() chunks concatenated once after the loop
# Expect: near-miss: must be silent
import numpy as np
import torch
from torch.nn import LSTM, Linear, Module
from torch.utils.data import DataLoader, TensorDataset


class Net(Module):
    def __init__(self, config):
        super().__init__()
        self.lstm = LSTM(input_size=config.input_size, hidden_size=config.hidden_size,
                         num_layers=config.lstm_layers, batch_first=True, dropout=config.dropout_rate)
        self.linear = Linear(in_features=config.hidden_size, out_features=config.output_size)

    def forward(self, x, hidden=None):
        lstm_out, hidden = self.lstm(x, hidden)
        return self.linear(lstm_out), hidden


def train(config, logger, train_and_valid_data):
    train_X, train_Y, valid_X, valid_Y = [torch.from_numpy(a).float() for a in train_and_valid_data]
    train_loader = DataLoader(TensorDataset(train_X, train_Y), batch_size=config.batch_size)
    valid_loader = DataLoader(TensorDataset(valid_X, valid_Y), batch_size=config.batch_size)

    device = torch.device("cuda:0" if config.use_cuda and torch.cuda.is_available() else "cpu")
    model = Net(config).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
    criterion = torch.nn.MSELoss()

    valid_loss_min, bad_epoch = float("inf"), 0
    for epoch in range(config.epoch):
        logger.info("Epoch {}/{}".format(epoch, config.epoch))
        model.train()
        train_loss_array = []
        hidden_train = None
        for _train_X, _train_Y in train_loader:
            _train_X, _train_Y = _train_X.to(device), _train_Y.to(device)
            optimizer.zero_grad()
            pred_Y, hidden_train = model(_train_X, hidden_train)
            if not config.do_continue_train:
                hidden_train = None
            else:
                h_0, c_0 = hidden_train
                h_0.detach_(), c_0.detach_()
                hidden_train = (h_0, c_0)
            loss = criterion(pred_Y, _train_Y)
            loss.backward()
            optimizer.step()
            train_loss_array.append(loss.item())

        valid_loss_cur = evaluate(config, model, valid_loader, criterion, device)
        logger.info("train loss %.6f, valid loss %.6f" % (np.mean(train_loss_array), valid_loss_cur))
        if valid_loss_cur < valid_loss_min:
            valid_loss_min, bad_epoch = valid_loss_cur, 0
            torch.save(model.state_dict(), config.model_save_path + config.model_name)
        else:
            bad_epoch += 1
            if bad_epoch >= config.patience:
                break


def evaluate(config, model, valid_loader, criterion, device):
    model.eval()
    valid_loss_array = []
    hidden_valid = None
    with torch.no_grad():
        for _valid_X, _valid_Y in valid_loader:
            _valid_X, _valid_Y = _valid_X.to(device), _valid_Y.to(device)
            pred_Y, hidden_valid = model(_valid_X, hidden_valid)
            if not config.do_continue_train:
                hidden_valid = None
            loss = criterion(pred_Y, _valid_Y)
            valid_loss_array.append(loss.item())
    return float(np.mean(valid_loss_array))


@torch.no_grad()
def predict(config, test_X):
    test_loader = DataLoader(TensorDataset(torch.from_numpy(test_X).float()), batch_size=1)
    device = torch.device("cuda:0" if config.use_cuda and torch.cuda.is_available() else "cpu")
    model = Net(config).to(device)
    model.load_state_dict(torch.load(config.model_save_path + config.model_name, map_location=device))

    chunks = []
    model.eval()
    hidden_predict = None
    for _data in test_loader:
        data_X = _data[0].to(device)
        pred_X, hidden_predict = model(data_X, hidden_predict)
        cur_pred = torch.squeeze(pred_X, dim=0)
        chunks.append(cur_pred.cpu())
    result = torch.cat(chunks, dim=0)
    return result.numpy()
