package io.ganglion.coordination;

import io.ganglion.coordination.CoordinationCommand.AppendHistory;
import io.ganglion.coordination.CoordinationCommand.Batch;
import io.ganglion.coordination.CoordinationCommand.CommitLiveSet;
import io.ganglion.coordination.CoordinationCommand.CreateObject;
import io.ganglion.coordination.CoordinationCommand.DeleteObject;
import io.ganglion.coordination.CoordinationCommand.SetSettings;
import io.ganglion.coordination.HistoryOutcome.Accepted;
import io.ganglion.coordination.HistoryOutcome.Rejected;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedMap;
import java.util.TreeMap;

/**
 * The coordination part of the metadata image: every object's accepted history, the committed live set and the runtime
 * settings. Immutable; {@link #apply} is the state machine that every broker runs over the metadata log, so every
 * broker holds the same image after the same commands.
 */
public record CoordinationImage(SortedMap<ObjectId, AcceptedHistory> objects, LiveSet liveSet, Settings settings) {

    public CoordinationImage {
        objects = Collections.unmodifiableSortedMap(new TreeMap<>(objects));
    }

    public static CoordinationImage empty() {
        return new CoordinationImage(new TreeMap<>(), LiveSet.empty(), Settings.defaults());
    }

    public Optional<AcceptedHistory> object(ObjectId id) {
        return Optional.ofNullable(objects.get(id));
    }

    /** The projected view: the active assignment of every object whose history validates. */
    public SortedMap<ObjectId, Assignment> projectedAssignments() {
        TreeMap<ObjectId, Assignment> projected = new TreeMap<>();
        for (Map.Entry<ObjectId, AcceptedHistory> entry : objects.entrySet()) {
            entry.getValue().validate().ifPresent(assignment -> projected.put(entry.getKey(), assignment));
        }
        return Collections.unmodifiableSortedMap(projected);
    }

    /** The result of applying a command: the next image, and why the command was rejected if it was. */
    public record Applied(CoordinationImage image, Optional<String> rejection) {
        public boolean accepted() {
            return rejection.isEmpty();
        }
    }

    /** Applies {@code command}. A rejected command leaves the image unchanged and says why. */
    public Applied apply(CoordinationCommand command) {
        return switch (command) {
            case CreateObject create -> {
                if (objects.containsKey(create.spec().id())) {
                    yield rejected("object " + create.spec().id() + " already exists");
                }
                TreeMap<ObjectId, AcceptedHistory> next = new TreeMap<>(objects);
                next.put(create.spec().id(), AcceptedHistory.created(create.spec()));
                yield accepted(new CoordinationImage(next, liveSet, settings));
            }
            case DeleteObject delete -> {
                if (!objects.containsKey(delete.id())) {
                    yield rejected("object " + delete.id() + " does not exist");
                }
                TreeMap<ObjectId, AcceptedHistory> next = new TreeMap<>(objects);
                next.remove(delete.id());
                yield accepted(new CoordinationImage(next, liveSet, settings));
            }
            case CommitLiveSet commit -> {
                LiveSet next = liveSet;
                for (NodeState change : commit.changes()) {
                    next = next.with(change);
                }
                yield accepted(new CoordinationImage(objects, next, settings));
            }
            case AppendHistory append -> {
                AcceptedHistory history = objects.get(append.id());
                if (history == null) {
                    yield rejected("object " + append.id() + " does not exist");
                }
                yield switch (history.append(append.record())) {
                    case Accepted accepted -> {
                        TreeMap<ObjectId, AcceptedHistory> next = new TreeMap<>(objects);
                        next.put(append.id(), accepted.history());
                        yield accepted(new CoordinationImage(next, liveSet, settings));
                    }
                    case Rejected rejected -> rejected(append.id() + ": " + rejected.reason());
                };
            }
            case Batch batch -> {
                CoordinationImage image = this;
                List<String> rejections = new ArrayList<>();
                for (CoordinationCommand each : batch.commands()) {
                    Applied applied = image.apply(each);
                    image = applied.image();
                    applied.rejection().ifPresent(reason -> rejections.add(reason));
                }
                yield rejections.size() == batch.commands().size()
                        ? rejected("every command of the batch: " + String.join("; ", rejections))
                        : accepted(image);
            }
            case SetSettings set -> {
                try {
                    yield accepted(new CoordinationImage(objects, liveSet, settings.withAll(set.values())));
                } catch (SettingException e) {
                    yield rejected(e.getMessage());
                }
            }
        };
    }

    private static Applied accepted(CoordinationImage image) {
        return new Applied(image, Optional.empty());
    }

    private Applied rejected(String reason) {
        return new Applied(this, Optional.of(reason));
    }
}
