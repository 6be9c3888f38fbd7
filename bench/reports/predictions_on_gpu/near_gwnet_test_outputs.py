# Source: https://github.com/nnzhan/Graph-WaveNet/blob/master/train.py
# Report: fixed variant of the audited test block of main(): each batch's no_grad prediction is moved to the CPU before it is kept
# Shape: preds is squeezed and copied with .cpu() before the append, so `outputs` and the final torch.cat live in host memory
# Expect: near-miss: must be silent

import argparse
import time

import numpy as np
import torch

import util
from engine import trainer

parser = argparse.ArgumentParser()
parser.add_argument('--device', type=str, default='cuda:0')
parser.add_argument('--data', type=str, default='data/METR-LA')
parser.add_argument('--adjdata', type=str, default='data/sensor_graph/adj_mx.pkl')
parser.add_argument('--adjtype', type=str, default='doubletransition')
parser.add_argument('--batch_size', type=int, default=64)
parser.add_argument('--seq_length', type=int, default=12)
parser.add_argument('--nhid', type=int, default=32)
parser.add_argument('--in_dim', type=int, default=2)
parser.add_argument('--num_nodes', type=int, default=207)
parser.add_argument('--dropout', type=float, default=0.3)
parser.add_argument('--learning_rate', type=float, default=0.001)
parser.add_argument('--weight_decay', type=float, default=0.0001)
parser.add_argument('--checkpoint', type=str, default='garage/metr_best.pth')
args = parser.parse_args()


def build_engine(device):
    sensor_ids, sensor_id_to_ind, adj_mx = util.load_adj(args.adjdata, args.adjtype)
    supports = [torch.tensor(i).to(device) for i in adj_mx]
    engine = trainer(None, args.in_dim, args.seq_length, args.num_nodes, args.nhid, args.dropout,
                     args.learning_rate, args.weight_decay, device, supports, True, True, None)
    return engine


def main():
    device = torch.device(args.device)
    dataloader = util.load_dataset(args.data, args.batch_size, args.batch_size, args.batch_size)
    scaler = dataloader['scaler']
    engine = build_engine(device)
    engine.scaler = scaler
    engine.model.load_state_dict(torch.load(args.checkpoint, map_location=device))
    engine.model.eval()

    outputs = []
    realy = torch.Tensor(dataloader['y_test'])
    realy = realy.transpose(1, 3)[:, 0, :, :]

    s1 = time.time()
    for iter, (x, y) in enumerate(dataloader['test_loader'].get_iterator()):
        testx = torch.Tensor(x).to(device)
        testx = testx.transpose(1, 3)
        with torch.no_grad():
            preds = engine.model(testx).transpose(1, 3)
        outputs.append(preds.squeeze().cpu())
    print('Inference time: {:.4f} secs'.format(time.time() - s1))

    yhat = torch.cat(outputs, dim=0)
    yhat = yhat[:realy.size(0), ...]

    amae, amape, armse = [], [], []
    for i in range(args.seq_length):
        pred = scaler.inverse_transform(yhat[:, :, i])
        real = realy[:, :, i]
        metrics = util.metric(pred, real)
        log = 'Evaluate best model on test data for horizon {:d}, Test MAE: {:.4f}, Test MAPE: {:.4f}, Test RMSE: {:.4f}'
        print(log.format(i + 1, metrics[0], metrics[1], metrics[2]))
        amae.append(metrics[0])
        amape.append(metrics[1])
        armse.append(metrics[2])

    log = 'On average over {:d} horizons, Test MAE: {:.4f}, Test MAPE: {:.4f}, Test RMSE: {:.4f}'
    print(log.format(args.seq_length, np.mean(amae), np.mean(amape), np.mean(armse)))


if __name__ == '__main__':
    main()
