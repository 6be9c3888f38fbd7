# Source: https://github.com/lukecavabarrett/pna/blob/95cd57328b2ee3e6531fd92eb74110c060c5faef/multitask_benchmark/util/train.py
# Report: PR #14 "Fixed memory leak": compute_test() ran the GNN over every split after model.eval() with autograd on, OOM on large graphs; fix disables autograd during testing (fix of https://github.com/lukecavabarrett/pna/pull/14)
# Shape: the merged fix: compute_test() body unchanged (model.eval() + forward comprehension) but its only call site is wrapped in `with torch.no_grad():`; closure only ever runs grad-disabled
# Expect: near-miss: must be silent
import sys
import time
from types import SimpleNamespace

import torch
import torch.optim as optim
from tqdm import tqdm

from models.pytorch.gnn_framework import GNN
from multitask_benchmark.util.util import load_dataset, total_loss, total_loss_multiple_batches, \
    specific_loss_multiple_batches


def execute_train(gnn_args, args):
    args.cuda = not args.no_cuda and torch.cuda.is_available()
    torch.manual_seed(args.seed)
    device = 'cuda' if args.cuda else 'cpu'

    adj, features, node_labels, graph_labels = load_dataset(args.data, args.loss, args.only_nodes,
                                                            args.only_graph, print_baseline=True)
    gnn_args = SimpleNamespace(**gnn_args)
    gnn_args.device = device
    gnn_args.nfeat = features['train'][0].shape[2]
    gnn_args.nodes_out = node_labels['train'][0].shape[-1]
    gnn_args.graph_out = graph_labels['train'][0].shape[-1]
    model = GNN(**vars(gnn_args))
    optimizer = optim.Adam(model.parameters(), lr=args.lr, weight_decay=args.weight_decay)

    def move_cuda(dset):
        if features[dset][0].is_cuda:
            return
        features[dset] = [x.cuda() for x in features[dset]]
        adj[dset] = [x.cuda() for x in adj[dset]]
        node_labels[dset] = [x.cuda() for x in node_labels[dset]]
        graph_labels[dset] = [x.cuda() for x in graph_labels[dset]]

    if args.cuda:
        model.cuda()
        move_cuda('train')
        move_cuda('val')

    def train(epoch):
        model.train()
        for batch in range(len(adj['train'])):
            optimizer.zero_grad()
            output = model(features['train'][batch], adj['train'][batch])
            loss_train = total_loss(output, (node_labels['train'][batch], graph_labels['train'][batch]),
                                    loss=args.loss, only_nodes=args.only_nodes, only_graph=args.only_graph)
            loss_train.backward()
            optimizer.step()

        model.eval()
        with torch.no_grad():
            output_zip = [model(features['val'][b], adj['val'][b]) for b in range(len(adj['val']))]
            output = ([x[0] for x in output_zip], [x[1] for x in output_zip])
            loss_val = total_loss_multiple_batches(output, (node_labels['val'], graph_labels['val']),
                                                   loss=args.loss, only_nodes=args.only_nodes,
                                                   only_graph=args.only_graph)
        return loss_train.item(), float(loss_val)

    def compute_test():
        # evaluate on every split; destructive on the datasets
        model.eval()
        sets = list(features.keys())
        for dset in sets:
            if args.cuda:
                move_cuda(dset)

            output_zip = [model(features[dset][b], adj[dset][b]) for b in range(len(adj[dset]))]
            output = ([x[0] for x in output_zip], [x[1] for x in output_zip])
            loss_test = total_loss_multiple_batches(output, (node_labels[dset], graph_labels[dset]),
                                                    loss=args.loss, only_nodes=args.only_nodes,
                                                    only_graph=args.only_graph)
            print("Test set results ", dset, ": loss= {:.4f}".format(loss_test))
            print(dset, ": ", specific_loss_multiple_batches(output, (node_labels[dset], graph_labels[dset]),
                                                             loss=args.loss, only_nodes=args.only_nodes,
                                                             only_graph=args.only_graph))
            del output_zip, output, loss_test
            del features[dset], adj[dset], node_labels[dset], graph_labels[dset]

    t_total = time.time()
    best, best_epoch = float('inf'), -1
    with tqdm(range(args.epochs), leave=True, unit='epoch') as t:
        for epoch in t:
            loss_train, loss_val = train(epoch)
            t.set_description('loss.train: {:.4f}, loss.val: {:.4f}'.format(loss_train, loss_val))
            if loss_val < best:
                torch.save(model.state_dict(), '{}.pkl'.format(epoch))
                best, best_epoch = loss_val, epoch

    print("Total time elapsed: {:.4f}s".format(time.time() - t_total))
    sys.stdout.flush()
    model.load_state_dict(torch.load('{}.pkl'.format(best_epoch), map_location=device))

    with torch.no_grad():
        compute_test()
