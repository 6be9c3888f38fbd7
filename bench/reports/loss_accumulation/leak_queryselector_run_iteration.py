# Source: https://github.com/moraieu/query-selector/blob/36bd1248d057e79200e48a083a5465bc8b1081e0/train.py
# Report: safeguard removed: run_iteration takes `unscaled_loss = loss.item()` before adding it to the epoch total; this rewrite keeps the tensor
# Shape: the mse_loss tensor is renamed to unscaled_loss and summed into total_loss (bound before the batch loop), which is also printed as the running mean
# Expect: TML001 line 72

import time

import numpy as np
import torch
import torch.nn as nn
from torch.optim import Adam
from torch.utils.data import DataLoader

from config import build_parser
from model import Transformer
from data_loader import Dataset_ETT_hour, Dataset_ETT_minute
from metrics import metric


def get_model(args):
    return Transformer(args.embedding_size, args.hidden_size, args.input_len, args.dec_seq_len, args.pred_len,
                       output_len=args.output_len, n_heads=args.n_heads, n_encoder_layers=args.n_encoder_layers,
                       n_decoder_layers=args.n_decoder_layers, enc_attn_type=args.encoder_attention,
                       dec_attn_type=args.decoder_attention, dropout=args.dropout)


def _get_data(args, flag):
    Data = Dataset_ETT_minute if args.data == 'ETTm1' else Dataset_ETT_hour
    if flag == 'test':
        shuffle_flag, drop_last, batch_size = False, True, 32
    else:
        shuffle_flag, drop_last, batch_size = True, True, args.batch_size
    data_set = Data(root_path='data', data_path=args.data + '.csv', flag=flag,
                    size=[args.seq_len, 0, args.pred_len], features=args.features,
                    target=args.target, inverse=args.inverse)
    data_loader = DataLoader(data_set, batch_size=batch_size, shuffle=shuffle_flag,
                             num_workers=args.num_workers, drop_last=drop_last)
    return data_set, data_loader


def run_metrics(caption, preds, trues):
    preds = np.array(preds)
    trues = np.array(trues)
    preds = preds.reshape(-1, preds.shape[-2], preds.shape[-1])
    trues = trues.reshape(-1, trues.shape[-2], trues.shape[-1])
    mae, mse, rmse, mape, mspe = metric(preds, trues)
    print('{} ; MSE: {}, MAE: {}'.format(caption, mse, mae))
    return mse, mae


def run_iteration(model, loader, args, message=''):
    preds = []
    trues = []
    total_loss = 0
    steps = 0
    target_device = 'cuda:{}'.format(args.local_rank)
    for i, (batch_x, batch_y, batch_x_mark, batch_y_mark) in enumerate(loader):
        model.optim.zero_grad()
        batch = torch.tensor(batch_x, dtype=torch.float32, device=target_device)
        target = torch.tensor(batch_y, dtype=torch.float32, device=target_device)
        steps += 1

        result = model(batch)
        loss = nn.functional.mse_loss(result.squeeze(2), target.squeeze(2), reduction='mean')

        pred = result.detach().cpu().numpy()
        true = target.detach().cpu().numpy()
        preds.append(pred)
        trues.append(true)

        unscaled_loss = loss
        total_loss += unscaled_loss  # expect: TML001
        print("{} Loss at step {}: {}, mean for epoch: {}, mem_alloc: {}".format(
            message, steps, unscaled_loss, total_loss / steps, torch.cuda.max_memory_allocated()))

        loss.backward()
        model.optim.step()
    return preds, trues


def preform_experiment(args):
    model = get_model(args)
    params = list(model.parameters())
    model.to('cuda')
    model.optim = Adam(params, lr=0.001)
    train_data, train_loader = _get_data(args, flag='train')

    start = time.time()
    for iter in range(1, args.iterations + 1):
        preds, trues = run_iteration(model, train_loader, args,
                                     message=' Run {:>3}, iteration: {:>3}:  '.format(args.run_num, iter))
        mse, mae = run_metrics("Loss after iteration {}".format(iter), preds, trues)
        print("Time per iteration {}, memory {}".format((time.time() - start) / iter, torch.cuda.memory_allocated()))


if __name__ == '__main__':
    preform_experiment(build_parser().parse_args(None))
